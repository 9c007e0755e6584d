//go:build !purego

package asm

const asmRegistered = true

// extraVariants adds "avx512vbmi-nt": the base64 tier with the
// non-temporal kernels forced on for every size.
func extraVariants(kernel string) []variant {
	if kernel != "base64" {
		return nil
	}
	return []variant{{name: "avx512vbmi-nt", tier: "avx512vbmi", setup: func() func() {
		old := nonTemporalMin
		nonTemporalMin = 0
		return func() { nonTemporalMin = old }
	}}}
}
