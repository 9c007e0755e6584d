package asm

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
)

const (
	stdChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	urlChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

var (
	stdAlphabet = NewAlphabet(stdChars)
	urlAlphabet = NewAlphabet(urlChars)
)

// testSizes crosses every vector width the kernels use.
var testSizes = []int{
	0, 1, 2, 3, 4, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 95, 96, 97,
	127, 128, 129, 191, 192, 193, 255, 256, 257, 1 << 10, 64<<10 + 1,
}

// tiers returns "generic" and every tier of kernel available here.
func tiers(kernel string) []string { return append([]string{"generic"}, Impls(kernel)...) }

// variant is a tier to test, possibly with test-only settings: setup
// applies them and returns the function that undoes them.
type variant struct {
	name, tier string
	setup      func() (undo func())
}

// variants returns every tier of kernel available here, plus the extra
// variants of the architecture (extraVariants).
func variants(kernel string) []variant {
	var vs []variant
	for _, tier := range tiers(kernel) {
		vs = append(vs, variant{name: tier, tier: tier})
	}
	for _, v := range extraVariants(kernel) {
		if Select(kernel, v.tier) {
			vs = append(vs, v)
		}
		Reset(kernel)
	}
	return vs
}

// forEachTier runs f as a subtest once per variant of kernel, with it
// selected.
func forEachTier(t *testing.T, kernel string, f func(t *testing.T)) {
	t.Helper()
	for _, v := range variants(kernel) {
		t.Run(v.name, func(t *testing.T) { withVariant(kernel, v, func() { f(t) }) })
	}
}

// withVariant runs f with variant v of kernel selected.
func withVariant(kernel string, v variant, f func()) {
	if !Select(kernel, v.tier) {
		panic("bug: cannot select " + kernel + "/" + v.tier)
	}
	defer Reset(kernel)
	if v.setup != nil {
		defer v.setup()()
	}
	f()
}

// withTier runs f with tier of kernel selected.
func withTier(kernel, tier string, f func()) { withVariant(kernel, variant{name: tier, tier: tier}, f) }

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// compareBytes fails t with hex dumps when got != want.
func compareBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if string(got) == string(want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: mismatch at byte %d (len got %d, want %d)\ngot:\n%swant:\n%s",
		what, i, len(got), len(want), dumpAround(got, i), dumpAround(want, i))
}

// dumpAround hex-dumps up to 128 bytes of b around index i.
func dumpAround(b []byte, i int) string {
	lo := max(0, i-64) &^ 15
	hi := min(len(b), lo+128)
	return fmt.Sprintf("(from offset %d)\n%s", lo, hex.Dump(b[lo:hi]))
}

const canary = 0xA5

// withCanary returns a slice of n bytes whose backing array holds extra canary
// bytes after it; checkCanary verifies them.
func withCanary(n int) []byte {
	b := make([]byte, n+64)
	for i := range b {
		b[i] = canary
	}
	return b[:n]
}

func checkCanary(t *testing.T, b []byte, from int) {
	t.Helper()
	full := b[:cap(b)]
	for i := from; i < len(full); i++ {
		if full[i] != canary {
			t.Fatalf("byte %d past the written part (%d) was overwritten: %#x", i, from, full[i])
		}
	}
}

var stdRaw = base64.RawStdEncoding
