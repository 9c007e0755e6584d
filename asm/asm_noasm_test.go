//go:build purego || !amd64

package asm

const asmRegistered = false

func extraVariants(kernel string) []variant { return nil }
