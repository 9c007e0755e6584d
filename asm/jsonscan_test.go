package asm

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// indexJSONSpecialRef is the obvious byte loop, the oracle for the generic
// SWAR code.
func indexJSONSpecialRef(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return -1
}

// plainJSON fills n bytes with random non-special bytes, including the
// neighbours of the special ones.
func plainJSON(r *rand.Rand, n int) []byte {
	near := []byte{0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF}
	b := make([]byte, n)
	for i := range b {
		if r.IntN(4) == 0 {
			b[i] = near[r.IntN(len(near))]
			continue
		}
		for {
			c := byte(r.Uint32())
			if indexJSONSpecialRef([]byte{c}) < 0 {
				b[i] = c
				break
			}
		}
	}
	return b
}

var jsonSpecials = []byte{'"', '\\', 0, 1, '\n', '\t', 0x1F}

func TestAllImplsIndexJSONSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	sizes := append([]int(nil), testSizes...)
	for n := 0; n <= 200; n++ {
		sizes = append(sizes, n)
	}
	forEachTier(t, "jsonscan", func(t *testing.T) {
		for _, n := range sizes {
			b := plainJSON(r, n)
			check := func(what string, b []byte) {
				t.Helper()
				want := indexJSONSpecialRef(b)
				if got := indexJSONSpecialGeneric(b); got != want {
					t.Fatalf("%s: generic = %d, want %d\n%s", what, got, want, dumpAround(b, max(want, 0)))
				}
				if got := IndexJSONSpecial(b); got != want {
					t.Fatalf("%s: IndexJSONSpecial = %d, want %d\n%s", what, got, want, dumpAround(b, max(want, 0)))
				}
			}
			check(fmt.Sprintf("n=%d none", n), b)
			if n > 300 {
				for _, pos := range []int{0, n / 2, n - 65, n - 64, n - 33, n - 32, n - 1} {
					c := append([]byte(nil), b...)
					c[pos] = jsonSpecials[r.IntN(len(jsonSpecials))]
					check(fmt.Sprintf("n=%d at %d", n, pos), c)
				}
				continue
			}
			for pos := 0; pos < n; pos++ {
				for _, s := range jsonSpecials {
					c := append([]byte(nil), b...)
					c[pos] = s
					check(fmt.Sprintf("n=%d %#x at %d", n, s, pos), c)
					if pos+1 < n { // a later special never wins
						c[n-1] = '"'
						check(fmt.Sprintf("n=%d %#x at %d, '\"' at end", n, s, pos), c)
					}
				}
			}
		}
	})
}

func TestJSONScanTier(t *testing.T) {
	forEachTier(t, "jsonscan", func(t *testing.T) {
		if got, want := JSONScanTier(), t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]; got != want {
			t.Fatalf("JSONScanTier() = %q, want %q", got, want)
		}
	})
}
