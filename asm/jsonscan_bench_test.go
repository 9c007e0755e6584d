package asm

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkIndexJSONSpecial scans a string body with its only special byte
// (the closing quote) at the end.
func BenchmarkIndexJSONSpecial(b *testing.B) {
	benchTiers(b, "jsonscan", func(b *testing.B, n int) {
		s := plainJSON(rand.New(rand.NewPCG(1, 1)), n)
		s[n-1] = '"'
		b.SetBytes(int64(n))
		b.ReportAllocs()
		for b.Loop() {
			if IndexJSONSpecial(s) != n-1 {
				b.Fatal("wrong index")
			}
		}
	})
}
