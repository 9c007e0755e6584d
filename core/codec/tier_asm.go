//go:build !purego

package codec

const emmansunDefault = true
