//go:build !purego

package asm

import "github.com/mcpblob/mcpblob/asm/internal/race"

// base64AVX512VBMI switches the AVX-512 VBMI encode and decode kernels
// (registered as "base64"/"avx512vbmi").
var base64AVX512VBMI = useAVX512VBMI

func init() { Register("base64", "avx512vbmi", &base64AVX512VBMI) }

func base64Tier() string {
	if base64AVX512VBMI {
		return "avx512vbmi"
	}
	return "generic"
}

// encodeBase64 requires len(src)%3 == 0 and len(dst) == len(src)/3*4.
func encodeBase64(dst, src []byte, a *Alphabet) {
	if base64AVX512VBMI && len(src) >= 48 {
		blocks := len(src) / 48
		race.ReadSlice(src[:blocks*48])
		race.WriteSlice(dst[:blocks*64])
		n := encodeBase64AVX512VBMI(dst, src, &a.Encode)
		src, dst = src[n:], dst[n/3*4:]
	}
	encodeBase64Generic(dst, src, a)
}

// decodeBase64 requires len(src)%4 == 0 and len(dst) == len(src)/4*3.
func decodeBase64(dst, src []byte, a *Alphabet) (nsrc, ndst int) {
	if base64AVX512VBMI && len(src) >= 64 {
		blocks := len(src) / 64
		race.ReadSlice(src[:blocks*64])
		race.WriteSlice(dst[:blocks*48])
		nsrc = decodeBase64AVX512VBMI(dst, src, &a.decodeLUT)
		ndst = nsrc / 4 * 3
	}
	s, d := decodeBase64Generic(dst[ndst:], src[nsrc:], a)
	return nsrc + s, ndst + d
}
