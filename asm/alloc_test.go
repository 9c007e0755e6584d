//go:build !race

package asm

import "testing"

// The kernels never allocate, on any tier.
func TestZeroAllocs(t *testing.T) {
	src := make([]byte, 3000)
	enc := make([]byte, 4000)
	dst := make([]byte, 3000)
	forEachTier(t, "base64", func(t *testing.T) {
		if n := testing.AllocsPerRun(20, func() {
			EncodeBase64(enc, src, stdAlphabet)
			DecodeBase64(dst, enc, stdAlphabet)
		}); n != 0 {
			t.Fatalf("%v allocations per run", n)
		}
	})
	forEachTier(t, "jsonscan", func(t *testing.T) {
		if n := testing.AllocsPerRun(20, func() { IndexJSONSpecial(enc) }); n != 0 {
			t.Fatalf("%v allocations per run", n)
		}
	})
}
