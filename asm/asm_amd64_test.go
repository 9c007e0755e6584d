//go:build !purego

package asm

import "testing"

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

// TestKernelFor checks the choice of kernel variant by working set, also
// when a test (or a CPU whose L3 is not much larger than its L2) puts
// nonTemporalMin below prefetchMin: non-temporal wins then.
func TestKernelFor(t *testing.T) {
	defer func(nt, pf int) { nonTemporalMin, prefetchMin = nt, pf }(nonTemporalMin, prefetchMin)
	for _, c := range []struct{ nt, pf, ws, want int }{
		{1000, 100, 99, plainKernel},
		{1000, 100, 100, prefetchKernel},
		{1000, 100, 999, prefetchKernel},
		{1000, 100, 1000, ntKernel},
		{0, 100, 32, ntKernel},
		{0, 2 << 20, 1 << 30, ntKernel},
		{1 << 30, 0, 32, prefetchKernel},
	} {
		nonTemporalMin, prefetchMin = c.nt, c.pf
		if got := kernelFor(c.ws); got != c.want {
			t.Errorf("nonTemporalMin %d, prefetchMin %d, working set %d: kernel %d, want %d", c.nt, c.pf, c.ws, got, c.want)
		}
	}
}
