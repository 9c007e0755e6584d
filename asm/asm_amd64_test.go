//go:build !purego

package asm

const asmRegistered = true

// extraVariants adds "avx512vbmi-nt" and "avx2-nt": the base64 tiers with
// the non-temporal kernels forced on for every size.
func extraVariants(kernel string) []variant {
	if kernel != "base64" {
		return nil
	}
	forceNT := func() func() {
		old := nonTemporalMin
		nonTemporalMin = 0
		return func() { nonTemporalMin = old }
	}
	return []variant{
		{name: "avx512vbmi-nt", tier: "avx512vbmi", setup: forceNT},
		{name: "avx2-nt", tier: "avx2", setup: forceNT},
	}
}
