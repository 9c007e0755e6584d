//go:build purego || !amd64

package asm

func indexJSONSpecial(b []byte) int { return indexJSONSpecialGeneric(b) }

func jsonScanTier() string { return "generic" }
