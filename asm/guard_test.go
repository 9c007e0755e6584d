package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mcpblob/mcpblob/asm/internal/guardbuf"
)

// Guard-page tests: inputs and outputs sit flush against PROT_NONE pages, so
// a kernel that reads or writes one byte outside its slices faults.

const guardMax = 300

func newGuard(t *testing.T, size int) *guardbuf.Buffer {
	t.Helper()
	if !guardbuf.Supported {
		t.Skip("no guard pages on this platform")
	}
	g, err := guardbuf.New(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func TestGuardEncodeBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	in, out := newGuard(t, 4096), newGuard(t, 4096)
	forEachTier(t, "base64", func(t *testing.T) {
		for n := 0; n <= guardMax; n++ {
			alpha := []*Alphabet{stdAlphabet, urlAlphabet}[n%2]
			data := randBytes(r, n)
			want := make([]byte, n/3*4)
			encodeBase64Generic(want, data, alpha)
			for _, src := range [][]byte{in.Head(n), in.Tail(n)} {
				copy(src, data)
				for _, dst := range [][]byte{out.Head(n / 3 * 4), out.Tail(n / 3 * 4)} {
					if got := EncodeBase64(dst, src, alpha); got != n/3*3 {
						t.Fatalf("n=%d: consumed %d", n, got)
					}
					compareBytes(t, fmt.Sprintf("n=%d", n), dst, want)
				}
			}
		}
	})
}

func TestGuardDecodeBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	in, out := newGuard(t, 4096), newGuard(t, 4096)
	forEachTier(t, "base64", func(t *testing.T) {
		for n := 0; n <= guardMax; n++ {
			alpha := []*Alphabet{stdAlphabet, urlAlphabet}[n%2]
			enc := make([]byte, (n+3)/4*3)
			data := make([]byte, len(enc)/3*4)
			encodeBase64Generic(data, randBytes(r, len(enc)), alpha)
			data = data[:n]
			// valid, and with one bad byte at the end or in the middle
			variants := [][]byte{data}
			if n > 0 {
				for _, pos := range []int{n - 1, n / 2} {
					v := append([]byte(nil), data...)
					v[pos] = '='
					variants = append(variants, v)
				}
			}
			for _, v := range variants {
				want := make([]byte, n/4*3)
				ws, wd := decodeBase64Generic(want, v, alpha)
				for _, src := range [][]byte{in.Head(n), in.Tail(n)} {
					copy(src, v)
					for _, dst := range [][]byte{out.Head(n / 4 * 3), out.Tail(n / 4 * 3)} {
						gs, gd := DecodeBase64(dst, src, alpha)
						if gs != ws || gd != wd {
							t.Fatalf("n=%d: got (%d, %d), want (%d, %d)", n, gs, gd, ws, wd)
						}
						compareBytes(t, fmt.Sprintf("n=%d", n), dst[:gd], want[:wd])
					}
				}
			}
		}
	})
}

func TestGuardIndexJSONSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	in := newGuard(t, 4096)
	forEachTier(t, "jsonscan", func(t *testing.T) {
		for n := 0; n <= guardMax; n++ {
			data := plainJSON(r, n)
			for _, b := range [][]byte{in.Head(n), in.Tail(n)} {
				copy(b, data)
				if got := IndexJSONSpecial(b); got != -1 {
					t.Fatalf("n=%d: got %d, want -1", n, got)
				}
				if n > 0 {
					b[n-1] = '\\'
					if got := IndexJSONSpecial(b); got != n-1 {
						t.Fatalf("n=%d: got %d, want %d", n, got, n-1)
					}
					b[0] = 0x1F
					if got := IndexJSONSpecial(b); got != 0 {
						t.Fatalf("n=%d: got %d, want 0", n, got)
					}
				}
			}
		}
	})
}
