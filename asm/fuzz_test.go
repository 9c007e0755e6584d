package asm

import (
	"bytes"
	"testing"
)

// Differential fuzz targets: every tier against the <kernel>Generic oracle
// (and encoding/base64 where it applies), with canary bytes past the part of
// dst a kernel may write. Each input runs through every tier available here.
// Run one target at a time, for example:
//
//	go test -run '^$' -fuzz '^FuzzKernelDecodeBase64$' -fuzztime 20000x ./asm

func FuzzKernelEncodeBase64(f *testing.F) {
	f.Add([]byte{}, false)
	f.Add([]byte("hello, world"), false)
	f.Add(bytes.Repeat([]byte{0xFF, 0x00, 0x7F}, 70), true)
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 13), false)
	f.Fuzz(func(t *testing.T, src []byte, url bool) {
		alpha := stdAlphabet
		if url {
			alpha = urlAlphabet
		}
		n := len(src) / 3 * 3
		want := make([]byte, n/3*4)
		encodeBase64Generic(want, src, alpha)
		if !url {
			compareBytes(t, "generic vs stdlib", want, []byte(stdRaw.EncodeToString(src[:n])))
		}
		for _, v := range variants("base64") {
			tier := v.name
			withVariant("base64", v, func() {
				dst := withCanary(n / 3 * 4)
				if got := EncodeBase64(dst, src, alpha); got != n {
					t.Fatalf("%s: consumed %d, want %d", tier, got, n)
				}
				compareBytes(t, tier, dst, want)
				checkCanary(t, dst, len(dst))
			})
		}
	})
}

// FuzzKernelDecodeBase64 decodes either the base64 of data with one byte
// replaced (mode bit 1) or data itself (mode bit 0).
func FuzzKernelDecodeBase64(f *testing.F) {
	f.Add([]byte{}, uint16(0), byte(0), uint8(0))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 100), uint16(77), byte('='), uint8(2))
	f.Add(bytes.Repeat([]byte{0xAB}, 200), uint16(130), byte('\n'), uint8(2))
	f.Add(bytes.Repeat([]byte{0x11}, 96), uint16(64), byte(0xC1), uint8(2))
	f.Add([]byte("QUJDRA==\nQUJD"), uint16(0), byte(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, pos uint16, c byte, mode uint8) {
		src := data
		if mode&1 == 0 {
			src = make([]byte, (len(data)+2)/3*4)
			encodeBase64Generic(src, data, stdAlphabet)
			src = src[:len(data)/3*4+[]int{0, 2, 3}[len(data)%3]]
			if mode&2 != 0 && len(src) > 0 {
				src[int(pos)%len(src)] = c
			}
		}
		for _, v := range variants("base64") {
			tier := v.name
			withVariant("base64", v, func() {
				// checkDecode compares with the generic code and, on the
				// consumed prefix, with encoding/base64; it checks the canary
				// and that the prefix is the longest valid one.
				checkDecode(t, tier, src, stdAlphabet)
				checkDecode(t, tier+" url", src, urlAlphabet)
			})
		}
		// The full pipeline: when the kernel took everything, the result is
		// encoding/base64's decoding of the whole input.
		if len(src)%4 == 0 {
			dst := make([]byte, len(src)/4*3)
			if ns, nd := DecodeBase64(dst, src, stdAlphabet); ns == len(src) {
				std, err := stdRaw.DecodeString(string(src))
				if err != nil {
					t.Fatalf("stdlib rejects what DecodeBase64 took whole: %v", err)
				}
				compareBytes(t, "whole input vs stdlib", dst[:nd], std)
			}
		}
	})
}

func FuzzKernelIndexJSONSpecial(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte(`hello "world"`))
	f.Add(bytes.Repeat([]byte{0x80, 0xFF, 0x20, 0x7F}, 40))
	f.Add(append(bytes.Repeat([]byte{'a'}, 130), '\\'))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := indexJSONSpecialRef(b)
		if got := indexJSONSpecialGeneric(b); got != want {
			t.Fatalf("generic = %d, want %d", got, want)
		}
		for _, tier := range tiers("jsonscan") {
			withTier("jsonscan", tier, func() {
				if got := IndexJSONSpecial(b); got != want {
					t.Fatalf("%s = %d, want %d\n%s", tier, got, want, dumpAround(b, max(want, 0)))
				}
			})
		}
	})
}

// FuzzKernelBase64Alphabets runs both directions with the alphabets of
// avx2Alphabets (whose AVX2 tables differ in where the extra characters
// sit): data is encoded, then decoded with one byte replaced by c at pos
// (when mode is odd), every tier against the generic code.
func FuzzKernelBase64Alphabets(f *testing.F) {
	f.Add([]byte("hello, world, hello, world, hello, world"), uint8(0), uint16(0), byte(0), uint8(0))
	f.Add(bytes.Repeat([]byte{0xFB, 0xFF, 0xBF}, 40), uint8(1), uint16(33), byte('/'), uint8(1))
	f.Add(bytes.Repeat([]byte{0xFC, 0x0F, 0xC0}, 40), uint8(3), uint16(70), byte('@'), uint8(1))
	f.Add(bytes.Repeat([]byte{0x00, 0x10, 0x83}, 50), uint8(8), uint16(40), byte(0x80), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, which uint8, pos uint16, c byte, mode uint8) {
		x := avx2Alphabets[int(which)%len(avx2Alphabets)]
		alpha := NewAlphabet(avx2Prefix + x)
		n := len(data) / 3 * 3
		enc := make([]byte, n/3*4)
		encodeBase64Generic(enc, data, alpha)
		if mode&1 != 0 && len(enc) > 0 {
			enc[int(pos)%len(enc)] = c
		}
		for _, v := range variants("base64") {
			withVariant("base64", v, func() {
				dst := withCanary(n / 3 * 4)
				if got := EncodeBase64(dst, data, alpha); got != n {
					t.Fatalf("%s %q: consumed %d, want %d", v.name, x, got, n)
				}
				want := make([]byte, n/3*4)
				encodeBase64Generic(want, data, alpha)
				compareBytes(t, v.name+" "+x, dst, want)
				checkCanary(t, dst, len(dst))
				checkDecode(t, v.name+" "+x, enc, alpha)
			})
		}
	})
}
