package asm

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAllImplsEncodeBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, a := range []struct {
		name  string
		alpha *Alphabet
	}{{"std", stdAlphabet}, {"url", urlAlphabet}, {"high", NewAlphabet(highChars())}} {
		t.Run(a.name, func(t *testing.T) {
			forEachTier(t, "base64", func(t *testing.T) {
				for _, n := range testSizes {
					src := randBytes(r, n)
					want := make([]byte, n/3*4)
					if got := encodeBase64Generic(want, src, a.alpha); got != n/3*3 {
						t.Fatalf("generic consumed %d of %d", got, n)
					}
					dst := withCanary(n / 3 * 4)
					got := EncodeBase64(dst, src, a.alpha)
					if got != n/3*3 {
						t.Fatalf("%s n=%d: consumed %d, want %d", a.name, n, got, n/3*3)
					}
					compareBytes(t, fmt.Sprintf("%s n=%d", a.name, n), dst, want)
					checkCanary(t, dst, len(dst))
					if a.alpha == stdAlphabet {
						compareBytes(t, fmt.Sprintf("stdlib n=%d", n), dst, []byte(stdRaw.EncodeToString(src[:n/3*3])))
					}
				}
			})
		})
	}
}

// highChars is an alphabet with characters >= 0x80, which the VBMI decoder
// cannot look up; blocks holding them go to the generic code.
func highChars() string {
	b := []byte(stdChars)
	b[10], b[40] = 0xC1, 0xFE
	return string(b)
}

func TestAllImplsDecodeBase64Valid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	forEachTier(t, "base64", func(t *testing.T) {
		for _, alpha := range []*Alphabet{stdAlphabet, urlAlphabet, NewAlphabet(highChars())} {
			for _, n := range testSizes {
				raw := randBytes(r, n)
				src := make([]byte, (n+2)/3*4)
				encodeBase64Generic(src, raw, alpha)
				// the last group, if partial, is left as whatever the
				// encoder wrote (zeros): a bad quantum at the end
				checkDecode(t, fmt.Sprintf("n=%d", n), src, alpha)
				checkDecode(t, fmt.Sprintf("n=%d/3", n), src[:len(src)/4*4-min(len(src), 3)], alpha)
			}
		}
	})
}

// checkDecode compares DecodeBase64 under the current tier with the generic
// code, and with encoding/base64 for the standard alphabet.
func checkDecode(t *testing.T, what string, src []byte, alpha *Alphabet) {
	t.Helper()
	want := make([]byte, len(src)/4*3)
	ws, wd := decodeBase64Generic(want, src, alpha)
	dst := withCanary(len(src) / 4 * 3)
	gs, gd := DecodeBase64(dst, src, alpha)
	if gs != ws || gd != wd {
		t.Fatalf("%s: DecodeBase64 = (%d, %d), generic (%d, %d)", what, gs, gd, ws, wd)
	}
	if gs%4 != 0 || gd != gs/4*3 {
		t.Fatalf("%s: DecodeBase64 = (%d, %d): not whole quanta", what, gs, gd)
	}
	compareBytes(t, what, dst[:gd], want[:wd])
	checkCanary(t, dst, gd)
	// The prefix is the longest one: the next quantum has a bad character.
	if gs < len(src)/4*4 {
		bad := false
		for _, c := range src[gs : gs+4] {
			bad = bad || alpha.Decode[c] == 0xFF
		}
		if !bad {
			t.Fatalf("%s: stopped at %d before a valid quantum %q", what, gs, src[gs:gs+4])
		}
	}
	if alpha == stdAlphabet {
		std, err := stdRaw.DecodeString(string(src[:gs]))
		if err != nil {
			t.Fatalf("%s: stdlib rejects the consumed prefix: %v", what, err)
		}
		compareBytes(t, what+" vs stdlib", dst[:gd], std)
	}
}

func TestAllImplsDecodeBase64Invalid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	raw := randBytes(r, 4*48)
	valid := []byte(stdRaw.EncodeToString(raw)) // 256 characters, 4 blocks
	bad := []byte{'=', '\n', '\r', ' ', 0, '@', '-', '_', 0x7F, 0x80, 0xC1, 0xAB, 0xFF}
	forEachTier(t, "base64", func(t *testing.T) {
		for _, c := range bad {
			for pos := range valid {
				src := append([]byte(nil), valid...)
				src[pos] = c
				checkDecode(t, fmt.Sprintf("%#x at %d", c, pos), src, stdAlphabet)
				// and with more data past the bad byte, in shorter inputs
				if pos > 70 {
					checkDecode(t, fmt.Sprintf("%#x at %d (short)", c, pos), src[pos-70:], stdAlphabet)
				}
			}
		}
		// URL alphabet: the standard alphabet's '+' and '/' are invalid
		checkDecode(t, "std in url", valid, urlAlphabet)
	})
}

func TestAllImplsDecodeBase64Padded(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	forEachTier(t, "base64", func(t *testing.T) {
		for _, n := range testSizes {
			s := base64.StdEncoding.EncodeToString(randBytes(r, n))
			checkDecode(t, fmt.Sprintf("padded n=%d", n), []byte(s), stdAlphabet)
			s = base64.StdEncoding.EncodeToString(randBytes(r, n)) + "\n" + s
			checkDecode(t, fmt.Sprintf("padded+newline n=%d", n), []byte(s), stdAlphabet)
			m := strings.ReplaceAll(base64.StdEncoding.EncodeToString(randBytes(r, n)), "A", "\r\n")
			checkDecode(t, fmt.Sprintf("crlf n=%d", n), []byte(m), stdAlphabet)
		}
	})
}

func TestBase64ShortDst(t *testing.T) {
	forEachTier(t, "base64", func(t *testing.T) {
		mustPanic(t, "encode", func() { EncodeBase64(make([]byte, 63), make([]byte, 48), stdAlphabet) })
		mustPanic(t, "decode", func() { DecodeBase64(make([]byte, 47), make([]byte, 64), stdAlphabet) })
		// Enough room is fine, even without room for a partial group.
		EncodeBase64(make([]byte, 64), make([]byte, 50), stdAlphabet)
		DecodeBase64(make([]byte, 48), make([]byte, 67), stdAlphabet)
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

func TestNewAlphabet(t *testing.T) {
	mustPanic(t, "short", func() { NewAlphabet("abc") })
	a := NewAlphabet(highChars())
	if a.Decode[0xC1] != 10 || a.decodeLUT['K'] != 0x80 || a.decodeLUT['B'] != 1 {
		t.Fatal("bad tables for a high alphabet")
	}
	for c := range 256 {
		want := strings.IndexByte(stdChars, byte(c))
		got := int(stdAlphabet.Decode[c])
		if want < 0 && got != 0xFF || want >= 0 && got != want {
			t.Fatalf("Decode[%#x] = %d, want %d", c, got, want)
		}
	}
}

func TestBase64Tier(t *testing.T) {
	forEachTier(t, "base64", func(t *testing.T) {
		want, _, _ := strings.Cut(t.Name()[strings.LastIndexByte(t.Name(), '/')+1:], "-")
		if got := Base64Tier(); got != want {
			t.Fatalf("Base64Tier() = %q, want %q", got, want)
		}
	})
}

// TestBase64Alignment runs every variant with dst at each offset from a
// 64-byte boundary (guard buffers start on a page): the non-temporal kernels
// align dst themselves.
func TestBase64Alignment(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	g := newGuard(t, 4096)
	forEachTier(t, "base64", func(t *testing.T) {
		for _, n := range []int{48, 96, 191, 192, 255, 300, 1000} {
			raw := randBytes(r, n)
			want := []byte(stdRaw.EncodeToString(raw[:n/3*3]))
			for off := 0; off < 64; off++ {
				buf := g.Head(len(want) + 128)
				for i := range buf {
					buf[i] = canary
				}
				dst := buf[off : off+len(want)]
				if got := EncodeBase64(dst, raw, stdAlphabet); got != n/3*3 {
					t.Fatalf("n=%d off=%d: consumed %d", n, off, got)
				}
				compareBytes(t, fmt.Sprintf("encode n=%d off=%d", n, off), dst, want)
				checkCanaryRange(t, buf, off, off+len(want))

				src := append([]byte(nil), want...) // dst is about to be reused
				for i := range buf {
					buf[i] = canary
				}
				d := buf[off : off+len(src)/4*3]
				ns, nd := DecodeBase64(d, src, stdAlphabet)
				if ns != len(src)/4*4 || nd != ns/4*3 {
					t.Fatalf("decode n=%d off=%d: (%d, %d)", n, off, ns, nd)
				}
				compareBytes(t, fmt.Sprintf("decode n=%d off=%d", n, off), d[:nd], raw[:nd])
				checkCanaryRange(t, buf, off, off+nd)
			}
		}
	})
}

// checkCanaryRange checks that b holds canary bytes outside b[from:to].
func checkCanaryRange(t *testing.T, b []byte, from, to int) {
	t.Helper()
	for i, c := range b {
		if (i < from || i >= to) && c != canary {
			t.Fatalf("byte %d outside the written range [%d, %d) was overwritten: %#x", i, from, to, c)
		}
	}
}
