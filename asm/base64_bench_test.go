package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchSizes = []int{64, 4 << 10, 64 << 10, 1 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// benchTiers runs f as tier/size sub-benchmarks for every tier of kernel.
func benchTiers(b *testing.B, kernel string, f func(b *testing.B, n int)) {
	for _, tier := range tiers(kernel) {
		for _, n := range benchSizes {
			b.Run(tier+"/"+sizeName(n), func(b *testing.B) {
				withTier(kernel, tier, func() { f(b, n) })
			})
		}
	}
}

// BenchmarkEncodeBase64 measures input bytes per second.
func BenchmarkEncodeBase64(b *testing.B) {
	benchTiers(b, "base64", func(b *testing.B, n int) {
		src := randBytes(rand.New(rand.NewPCG(1, 1)), n)
		dst := make([]byte, (n+2)/3*4)
		b.SetBytes(int64(n))
		b.ReportAllocs()
		for b.Loop() {
			EncodeBase64(dst, src, stdAlphabet)
		}
	})
}

// BenchmarkDecodeBase64 measures input characters per second.
func BenchmarkDecodeBase64(b *testing.B) {
	benchTiers(b, "base64", func(b *testing.B, n int) {
		src := make([]byte, n)
		encodeBase64Generic(src, randBytes(rand.New(rand.NewPCG(1, 1)), n/4*3), stdAlphabet)
		dst := make([]byte, n/4*3)
		b.SetBytes(int64(n))
		b.ReportAllocs()
		for b.Loop() {
			if ns, _ := DecodeBase64(dst, src, stdAlphabet); ns != n {
				b.Fatal("decode stopped early")
			}
		}
	})
}
