package codec

import (
	"runtime"

	emb64 "github.com/emmansun/base64"

	"github.com/mcpblob/mcpblob/asm"
)

// Tier names, best first.
const (
	TierAVX512VBMI = "avx512vbmi" // asm package kernels (asm.Base64Tier)
	TierAVX2       = "avx2"       // asm package kernels, for the alphabets asm.Alphabet.Tier names
	TierEmmansun   = "emmansun"   // github.com/emmansun/base64 v0.9.0 (AVX2/SSE, its own dispatch)
	TierGeneric    = "generic"    // encoding/base64 alone

	// tierAsmGeneric is a test-only tier: the asm kernel plumbing with
	// asm's generic Go code behind it.
	tierAsmGeneric = "asm-generic"
)

// Tier switches. They are read on every call, so tests can move between
// tiers at run time through the asm registry (asm.Select, asm.Reset).
var (
	// useEmmansun switches the emmansun tier, registered with asm as
	// "base64"/"emmansun". It is off under purego, where emmansun has no
	// assembly either.
	useEmmansun = emmansunDefault
	// forceAsm makes the codec call the asm kernels even when asm runs its
	// generic code, so tests cover the kernel plumbing on any machine.
	forceAsm = false
)

func init() { asm.Register("base64", TierEmmansun, &useEmmansun) }

// emmansunDecodes reports whether the emmansun tier decodes too, or only
// encodes: on amd64 only. Its arm64 (NEON) decoder, v0.9.0, takes a byte
// >= 0x80 for 'A' (its two 64-entry table lookups both leave such a byte 0,
// and nothing else checks it), so invalid input decodes without error; the
// codec's tests fail there (under qemu-user). Its other architectures'
// decoders are untested here.
const emmansunDecodes = runtime.GOARCH == "amd64"

// asmOn reports whether the asm kernels take the bulk of the work for e: a
// kernel tier serves its alphabet (the AVX2 tier serves the standard and
// URL alphabets and a few others, see asm.Alphabet.Tier).
func (e *Encoding) asmOn() bool { return forceAsm || e.tables.Tier() != TierGeneric }

// Minimum input sizes worth a kernel call; below them the reference code is
// as fast and the call overhead dominates.
const (
	minFastEncode = 24 // bytes of input
	minFastDecode = 32 // characters of input
)

// Tier returns the name of the base64 tier the codec uses for bulk data
// with the standard and URL alphabets: "avx512vbmi", "avx2", "emmansun" or
// "generic"; decoding may use a lower one (see [DecodeTier]).
func Tier() string {
	switch t := asm.Base64Tier(); {
	case t != TierGeneric:
		return t
	case forceAsm:
		return tierAsmGeneric
	case useEmmansun:
		return TierEmmansun
	}
	return TierGeneric
}

// DecodeTier is [Tier] for decoding: "generic" where Tier is "emmansun"
// outside amd64, where emmansun only encodes.
func DecodeTier() string {
	if t := Tier(); t != TierEmmansun || emmansunDecodes {
		return t
	}
	return TierGeneric
}

// encodePrefix encodes a prefix of src made of whole 3-byte groups with the
// best tier and returns how many bytes of src it consumed; it wrote n/3*4
// bytes to dst. It never writes more than len(dst) bytes.
func (e *Encoding) encodePrefix(dst, src []byte) int {
	if len(src) < minFastEncode {
		return 0
	}
	if m := len(dst) / 4 * 3; len(src) > m {
		src = src[:m] // let the reference code panic on a short dst, as the stdlib does
	}
	switch {
	case e.asmOn():
		return asm.EncodeBase64(dst, src, e.tables)
	case e.emm != nil && useEmmansun:
		n := len(src) / 3 * 3
		e.emm.raw.Encode(dst, src[:n])
		return n
	}
	return 0
}

// fastDecode reports whether a kernel is worth calling for n characters.
func (e *Encoding) fastDecode(n int) bool {
	if n < minFastDecode {
		return false
	}
	return e.asmOn() || useEmmansun && emmansunDecodes && e.emm != nil
}

// decodePrefix decodes a prefix of src made of whole quanta of four alphabet
// characters with the best tier and returns the characters consumed and the
// bytes written (nsrc/4*3). It stops early, possibly at 0, at anything else
// (CR, LF, padding, an invalid byte), so that the caller can continue with
// exactly the stdlib's semantics. It never writes more than len(dst) bytes.
func (e *Encoding) decodePrefix(dst, src []byte) (nsrc, ndst int) {
	if m := len(dst) / 3 * 4; len(src) > m {
		src = src[:m]
	}
	if len(src) < 4 {
		return 0, 0
	}
	switch {
	case e.asmOn():
		return asm.DecodeBase64(dst, src, e.tables)
	case useEmmansun && emmansunDecodes && e.emm != nil:
		return e.emm.decodePrefix(dst, src, &e.tables.Decode)
	}
	return 0, 0
}

// emmEncoding is the unpadded emmansun encoding for one of the two alphabets
// that emmansun accelerates.
type emmEncoding struct{ raw *emb64.Encoding }

func newEmmEncoding(alphabet string) *emmEncoding {
	switch alphabet {
	case alphabetStd:
		return &emmEncoding{emb64.RawStdEncoding}
	case alphabetURL:
		return &emmEncoding{emb64.RawURLEncoding}
	}
	return nil
}

// emmansun decodes in chunks that start small and double up to emmChunk,
// so that the work thrown away when a chunk turns out not to be clean (a
// CR/LF every 76 characters, say) stays proportional to the progress made.
const (
	emmFirstChunk = 256
	emmChunk      = 16 << 10
)

// decodePrefix gives emmansun the asm kernel contract. emmansun decodes
// whole inputs with stdlib semantics (it skips CR/LF itself), so it is
// handed chunks of whole quanta through its unpadded encoding: a chunk that
// decodes without error to exactly len/4*3 bytes held only alphabet
// characters (a CR/LF would shorten the output, '=' is an error). The first
// chunk that fails is decoded again up to its first non-alphabet character.
func (m *emmEncoding) decodePrefix(dst, src []byte, table *[256]byte) (nsrc, ndst int) {
	n := len(src) / 4 * 4
	c := emmFirstChunk
	for nsrc < n {
		c = min(c, n-nsrc)
		chunk := src[nsrc : nsrc+c]
		w, err := m.raw.Decode(dst[ndst:], chunk)
		if err == nil && w == c/4*3 {
			nsrc += c
			ndst += w
			c = min(2*c, emmChunk)
			continue
		}
		k := 0
		for k < c && table[chunk[k]] != 0xFF {
			k++
		}
		k = k / 4 * 4
		if k > 0 {
			m.raw.Decode(dst[ndst:], chunk[:k]) // clean: cannot fail
		}
		return nsrc + k, ndst + k/4*3
	}
	return nsrc, ndst
}

// decodeScalar has the contract of decodePrefix in plain Go, for the
// streaming decoder when no kernel tier is on: the reference decoder cannot
// stop at a quantum boundary before CR/LF or padding.
func decodeScalar(dst, src []byte, t *[256]byte) (nsrc, ndst int) {
	for len(src)-nsrc >= 4 && len(dst)-ndst >= 3 {
		s := src[nsrc : nsrc+4 : nsrc+4]
		c0, c1, c2, c3 := t[s[0]], t[s[1]], t[s[2]], t[s[3]]
		if c0|c1|c2|c3 == 0xFF {
			break
		}
		v := uint(c0)<<18 | uint(c1)<<12 | uint(c2)<<6 | uint(c3)
		d := dst[ndst : ndst+3 : ndst+3]
		d[0], d[1], d[2] = byte(v>>16), byte(v>>8), byte(v)
		nsrc += 4
		ndst += 3
	}
	return nsrc, ndst
}
