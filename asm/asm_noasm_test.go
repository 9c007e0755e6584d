//go:build purego || !amd64

package asm

const asmRegistered = false
