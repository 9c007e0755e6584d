//go:build !purego

package asm

const asmRegistered = true
