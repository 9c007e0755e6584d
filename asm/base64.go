package asm

// Alphabet holds the precomputed tables of one base64 alphabet for the kernels.
// Build it once with [NewAlphabet] and share it; it is read-only after that.
type Alphabet struct {
	Encode [64]byte  // index -> character; also the VPERMB table of the encoder
	Decode [256]byte // character -> index, 0xFF when not in the alphabet

	// decodeLUT is the 128-entry reverse table of the AVX-512 VBMI decoder:
	// character -> index for 7-bit characters, 0x80 when not in the alphabet.
	// Characters >= 0x80 are rejected by the kernel before the lookup matters.
	decodeLUT [128]byte

	// avx2 is the table of the AVX2 kernels (see avx2Table), valid when
	// avx2OK: the alphabet is A-Z, a-z, 0-9 and two more ASCII characters.
	// avx2Prev selects the decodeBase64AVX2Prev kernels.
	avx2     [80]byte
	avx2OK   bool
	avx2Prev bool
}

// NewAlphabet builds the tables for a 64-character alphabet (for example the
// encoding/base64 StdEncoding or URLEncoding characters). When a character
// repeats, the decode tables map it to its last index. It panics when chars
// is not 64 bytes long. Characters >= 0x80 are allowed; blocks holding them
// are decoded by the generic code.
func NewAlphabet(chars string) *Alphabet {
	if len(chars) != 64 {
		panic("bug: asm: alphabet must have 64 characters")
	}
	a := &Alphabet{}
	copy(a.Encode[:], chars)
	for i := range a.Decode {
		a.Decode[i] = 0xFF
	}
	for i := range a.decodeLUT {
		a.decodeLUT[i] = 0x80
	}
	for i := 0; i < 64; i++ {
		a.Decode[chars[i]] = byte(i)
		if chars[i] < 0x80 {
			a.decodeLUT[chars[i]] = byte(i)
		}
	}
	a.avx2OK, a.avx2Prev = avx2Table(&a.avx2, chars)
	return a
}

// encodeBase64Generic is the reference for every encode tier: it encodes all
// whole 3-byte groups of src into dst and returns the src bytes consumed.
// len(dst) must be at least len(src)/3*4.
func encodeBase64Generic(dst, src []byte, a *Alphabet) int {
	n := len(src) / 3 * 3
	if n == 0 {
		return 0
	}
	src = src[:n]
	dst = dst[:n/3*4]
	enc := &a.Encode
	for len(src) >= 3 && len(dst) >= 4 {
		v := uint(src[0])<<16 | uint(src[1])<<8 | uint(src[2])
		dst[0] = enc[v>>18&0x3F]
		dst[1] = enc[v>>12&0x3F]
		dst[2] = enc[v>>6&0x3F]
		dst[3] = enc[v&0x3F]
		src, dst = src[3:], dst[4:]
	}
	return n
}

// decodeBase64Generic is the reference for every decode tier: it decodes the
// longest prefix of src made of whole 4-character quanta holding only
// alphabet characters and returns the characters consumed and the bytes
// written (nsrc/4*3). len(dst) must be at least len(src)/4*3.
func decodeBase64Generic(dst, src []byte, a *Alphabet) (nsrc, ndst int) {
	n := len(src) / 4 * 4
	src = src[:n]
	dst = dst[:n/4*3]
	dec := &a.Decode
	// Two quanta at a time; a bad pair falls through to the loop below,
	// which keeps a valid first quantum.
	for len(src) >= 8 && len(dst) >= 6 {
		c0, c1, c2, c3 := dec[src[0]], dec[src[1]], dec[src[2]], dec[src[3]]
		c4, c5, c6, c7 := dec[src[4]], dec[src[5]], dec[src[6]], dec[src[7]]
		if (c0|c1|c2|c3|c4|c5|c6|c7)&0xC0 != 0 {
			break
		}
		v := uint(c0)<<18 | uint(c1)<<12 | uint(c2)<<6 | uint(c3)
		w := uint(c4)<<18 | uint(c5)<<12 | uint(c6)<<6 | uint(c7)
		dst[0], dst[1], dst[2] = byte(v>>16), byte(v>>8), byte(v)
		dst[3], dst[4], dst[5] = byte(w>>16), byte(w>>8), byte(w)
		src, dst = src[8:], dst[6:]
		nsrc, ndst = nsrc+8, ndst+6
	}
	for len(src) >= 4 && len(dst) >= 3 {
		c0, c1, c2, c3 := dec[src[0]], dec[src[1]], dec[src[2]], dec[src[3]]
		if (c0|c1|c2|c3)&0xC0 != 0 {
			break
		}
		v := uint(c0)<<18 | uint(c1)<<12 | uint(c2)<<6 | uint(c3)
		dst[0], dst[1], dst[2] = byte(v>>16), byte(v>>8), byte(v)
		src, dst = src[4:], dst[3:]
		nsrc, ndst = nsrc+4, ndst+3
	}
	return nsrc, ndst
}

// EncodeBase64 encodes every whole 3-byte group of src into dst, 4
// characters per group, and returns n, the number of src bytes consumed:
// len(src)/3*3. It wrote n/3*4 bytes to dst and never writes more. It writes
// no padding and leaves the last len(src)%3 bytes to the caller.
//
// len(dst) must be at least len(src)/3*4; EncodeBase64 panics otherwise,
// before writing anything. dst and src must not overlap. The result does not
// depend on the tier in use.
func EncodeBase64(dst, src []byte, a *Alphabet) (n int) {
	n = len(src) / 3 * 3
	if len(dst) < n/3*4 {
		panic("bug: asm: EncodeBase64 dst too short")
	}
	if n == 0 {
		return 0
	}
	encodeBase64(dst[:n/3*4], src[:n], a)
	return n
}

// DecodeBase64 decodes the longest prefix of src made of whole 4-character
// quanta that hold only alphabet characters (no padding, no newlines, nothing
// else) and returns nsrc, the characters consumed (a multiple of 4), and
// ndst = nsrc/4*3, the bytes written to dst. It never writes past dst[ndst-1].
// When nsrc < len(src)/4*4, the quantum at src[nsrc:nsrc+4] holds a character
// outside the alphabet; the caller decodes the rest and reports errors.
//
// len(dst) must be at least len(src)/4*3; DecodeBase64 panics otherwise,
// before writing anything. dst and src must not overlap. The result does not
// depend on the tier in use: the kernels stop at the first 64-character block
// holding anything else and the generic code finishes the quanta before it.
func DecodeBase64(dst, src []byte, a *Alphabet) (nsrc, ndst int) {
	n := len(src) / 4 * 4
	if len(dst) < n/4*3 {
		panic("bug: asm: DecodeBase64 dst too short")
	}
	if n == 0 {
		return 0, 0
	}
	return decodeBase64(dst[:n/4*3], src[:n], a)
}

// Base64Tier names the base64 kernel tier in use: "avx512vbmi", "avx2" or
// "generic". It reflects [Select] and the start-up knobs (see [Features]).
// Tiers registered by other packages (core/codec's "emmansun") are not
// reported here. The AVX2 tier serves only some alphabets: see
// [Alphabet.Tier].
func Base64Tier() string { return base64Tier() }

// Tier names the base64 kernel tier that [EncodeBase64] and [DecodeBase64]
// use for a: [Base64Tier], except "generic" where the tier is "avx2" and a
// is not made of A-Z, a-z, 0-9 and two more ASCII characters (as the
// standard and URL alphabets are).
func (a *Alphabet) Tier() string { return a.tier() }
