//go:build purego

package codec

// Under purego emmansun has no assembly, so its tier would only be a
// slower copy of the reference code.
const emmansunDefault = false
