package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// avx2Alphabets are alphabets of the AVX2 kernels' form, A-Z a-z 0-9 and two
// more characters, whose extra characters sit in every kind of row: alone
// in a row, two in one row ("+/"), in the digits' row with their offset
// (':') or another, in a letters' row ('_', '@', '['), and in control rows.
var avx2Alphabets = []string{"+/", "-_", "_-", ":@", "*:", ".,", "!~", "\x01\x7f", "[\x00"}

func TestAVX2Table(t *testing.T) {
	prevs := 0
	for _, x := range avx2Alphabets {
		a := NewAlphabet(avx2Prefix + x)
		if !a.avx2OK {
			t.Errorf("%q: no AVX2 table", x)
		}
		if a.avx2Prev {
			prevs++
		}
	}
	// Both decoder variants are covered: '/' takes row 1's slot, '_' cannot
	// take row 4's (A-O).
	if !stdAlphabet.avx2Prev || urlAlphabet.avx2Prev || prevs == len(avx2Alphabets) {
		t.Errorf("prev: std %v, url %v, %d of %d", stdAlphabet.avx2Prev, urlAlphabet.avx2Prev, prevs, len(avx2Alphabets))
	}
	// Not of the form, or two extra characters both needing the fix slot
	// ('[' and '`' share rows with letters of other offsets, '@' and ':' too,
	// ';' and '<' share the digits' row with another offset).
	for _, chars := range []string{highChars(), avx2Prefix[1:] + "A+/", avx2Prefix + "0/", avx2Prefix + "\x80+",
		avx2Prefix + "[`", avx2Prefix + "@:", avx2Prefix + ";<"} {
		if a := NewAlphabet(chars); a.avx2OK || a.Tier() == "avx2" {
			t.Errorf("%q: AVX2 table made (tier %s)", chars, a.Tier())
		}
	}
	forEachTier(t, "base64", func(t *testing.T) {
		if got, want := stdAlphabet.Tier(), Base64Tier(); got != want {
			t.Fatalf("std alphabet tier %q, Base64Tier %q", got, want)
		}
	})
}

// TestAVX2AlphabetsEveryByte decodes, with each alphabet of avx2Alphabets,
// blocks of valid characters with every byte value at every position of a
// 32-character block, and encodes every 6-bit value at every position,
// against the generic code.
func TestAVX2AlphabetsEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	forEachTier(t, "base64", func(t *testing.T) {
		for _, x := range avx2Alphabets {
			a := NewAlphabet(avx2Prefix + x)
			raw := randBytes(r, 96)
			valid := make([]byte, 128)
			encodeBase64Generic(valid, raw, a)
			for pos := 32; pos < 64; pos++ {
				for c := range 256 {
					src := append([]byte(nil), valid...)
					src[pos] = byte(c)
					checkDecode(t, fmt.Sprintf("%q: %#x at %d", x, c, pos), src, a)
				}
			}
			for v := range 64 {
				src := append([]byte(nil), raw...)
				src[40] = byte(v << 2) // the first character of group 13
				src[50] = byte(v)      // the last character of group 16
				want := make([]byte, 128)
				encodeBase64Generic(want, src, a)
				dst := withCanary(128)
				EncodeBase64(dst, src, a)
				compareBytes(t, fmt.Sprintf("%q: encode %d", x, v), dst, want)
				checkCanary(t, dst, 128)
			}
		}
	})
}
