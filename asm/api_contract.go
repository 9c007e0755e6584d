package asm

// This file pins the exported API other packages build against while the
// kernels are written. The asm owner replaces these bodies with dispatch.

// Alphabet holds the precomputed tables of one base64 alphabet for the kernels.
type Alphabet struct {
	Encode [64]byte  // index -> character
	Decode [256]byte // character -> index, 0xFF when not in the alphabet
}

// NewAlphabet builds the tables for a 64-character alphabet.
func NewAlphabet(chars string) *Alphabet {
	if len(chars) != 64 {
		panic("bug: asm: alphabet must have 64 characters")
	}
	a := &Alphabet{}
	copy(a.Encode[:], chars)
	for i := range a.Decode {
		a.Decode[i] = 0xFF
	}
	for i := 0; i < 64; i++ {
		a.Decode[chars[i]] = byte(i)
	}
	return a
}

// EncodeBase64 encodes a prefix of src made of whole 3-byte groups (the kernel
// may take less than all of them, in blocks of its own width) and returns n,
// the number of src bytes consumed; it wrote n/3*4 bytes to dst.
// len(dst) must be at least len(src)/3*4. No padding is ever written.
func EncodeBase64(dst, src []byte, a *Alphabet) (n int) {
	return encodeBase64Generic(dst, src, a)
}

// DecodeBase64 decodes a prefix of src made of whole 4-character quanta that
// contain only alphabet characters (no padding, no newlines) and returns
// nsrc, the characters consumed, and ndst = nsrc/4*3, the bytes written.
// It stops early at the first block holding anything else; the caller decodes
// the rest and reports errors. len(dst) must be at least len(src)/4*3.
func DecodeBase64(dst, src []byte, a *Alphabet) (nsrc, ndst int) {
	return decodeBase64Generic(dst, src, a)
}

// IndexJSONSpecial returns the index of the first byte of b that is '"', '\\'
// or below 0x20, or -1 when there is none.
func IndexJSONSpecial(b []byte) int {
	return indexJSONSpecialGeneric(b)
}

func encodeBase64Generic(dst, src []byte, a *Alphabet) int {
	n := len(src) / 3 * 3
	di := 0
	for si := 0; si < n; si += 3 {
		v := uint(src[si])<<16 | uint(src[si+1])<<8 | uint(src[si+2])
		dst[di+0] = a.Encode[v>>18&0x3F]
		dst[di+1] = a.Encode[v>>12&0x3F]
		dst[di+2] = a.Encode[v>>6&0x3F]
		dst[di+3] = a.Encode[v&0x3F]
		di += 4
	}
	return n
}

func decodeBase64Generic(dst, src []byte, a *Alphabet) (int, int) {
	si, di := 0, 0
	for ; si+4 <= len(src); si, di = si+4, di+3 {
		c0, c1, c2, c3 := a.Decode[src[si]], a.Decode[src[si+1]], a.Decode[src[si+2]], a.Decode[src[si+3]]
		if c0|c1|c2|c3 == 0xFF || (c0|c1|c2|c3)&0xC0 != 0 {
			break
		}
		v := uint(c0)<<18 | uint(c1)<<12 | uint(c2)<<6 | uint(c3)
		dst[di+0] = byte(v >> 16)
		dst[di+1] = byte(v >> 8)
		dst[di+2] = byte(v)
	}
	return si, di
}

func indexJSONSpecialGeneric(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return -1
}

// Base64Tier names the base64 kernel tier in use ("avx512vbmi" or "generic").
func Base64Tier() string { return "generic" }

// JSONScanTier names the JSON scanning kernel tier in use ("avx512", "avx2" or "generic").
func JSONScanTier() string { return "generic" }

// Features lists the CPU features the dispatcher looked at and found.
func Features() []string { return nil }
