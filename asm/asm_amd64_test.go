//go:build !purego

package asm

const asmRegistered = true

// extraVariants adds "avx512vbmi-nt" and "avx2-nt": the base64 tiers with
// the non-temporal kernels forced on for every size, and "avx512vbmi-pf"
// and "avx2-pf": the same with the prefetching kernels.
func extraVariants(kernel string) []variant {
	if kernel != "base64" {
		return nil
	}
	forceNT := lowerThreshold(&nonTemporalMin)
	forcePF := lowerThreshold(&prefetchMin)
	return []variant{
		{name: "avx512vbmi-nt", tier: "avx512vbmi", setup: forceNT},
		{name: "avx2-nt", tier: "avx2", setup: forceNT},
		{name: "avx512vbmi-pf", tier: "avx512vbmi", setup: forcePF},
		{name: "avx2-pf", tier: "avx2", setup: forcePF},
	}
}

// lowerThreshold returns a variant setup that sets *min to 0.
func lowerThreshold(min *int) func() func() {
	return func() func() {
		old := *min
		*min = 0
		return func() { *min = old }
	}
}
