package codec

import (
	"encoding/base64"
	"slices"

	"github.com/mcpblob/mcpblob/asm"
)

// Padding characters, as in encoding/base64.
const (
	StdPadding rune = base64.StdPadding // standard padding character '='
	NoPadding  rune = base64.NoPadding  // no padding
)

const (
	alphabetStd = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	alphabetURL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// An Encoding is a radix 64 encoding/decoding scheme defined by a
// 64-character alphabet, with the API and the exact behaviour of
// [encoding/base64.Encoding]. Its methods are safe for concurrent use.
type Encoding struct {
	std      *base64.Encoding // the reference: tails, padding, newlines, errors
	alphabet string
	padChar  rune
	strict   bool
	tables   *asm.Alphabet // encode and decode tables, also for the kernels
	emm      *emmEncoding  // nil when emmansun has no SIMD path for the alphabet
}

// StdEncoding is the standard base64 encoding, as defined in RFC 4648.
var StdEncoding = NewEncoding(alphabetStd)

// URLEncoding is the alternate base64 encoding defined in RFC 4648.
var URLEncoding = NewEncoding(alphabetURL)

// RawStdEncoding is [StdEncoding] without padding (RFC 4648 section 3.2).
var RawStdEncoding = StdEncoding.WithPadding(NoPadding)

// RawURLEncoding is [URLEncoding] without padding.
var RawURLEncoding = URLEncoding.WithPadding(NoPadding)

// NewEncoding returns a new padded Encoding defined by the given alphabet,
// which must be a 64-byte string that contains neither the padding
// character nor CR/LF; it panics otherwise, as [encoding/base64.NewEncoding] does.
func NewEncoding(alphabet string) *Encoding {
	e := &Encoding{
		std:      base64.NewEncoding(alphabet), // validates and panics like the stdlib
		alphabet: alphabet,
		padChar:  StdPadding,
	}
	e.tables = asm.NewAlphabet(alphabet)
	e.emm = newEmmEncoding(alphabet)
	return e
}

// WithPadding returns a new Encoding identical to e but with the given padding
// character, or [NoPadding]. It panics on the same inputs as
// [encoding/base64.Encoding.WithPadding].
func (e Encoding) WithPadding(padding rune) *Encoding {
	e.std = e.std.WithPadding(padding)
	e.padChar = padding
	return &e
}

// Strict returns a new Encoding identical to e but with strict decoding:
// trailing padding bits must be zero (RFC 4648 section 3.5).
// CR and LF are still ignored.
func (e Encoding) Strict() *Encoding {
	e.std = e.std.Strict()
	e.strict = true
	return &e
}

// EncodedLen returns the length in bytes of the base64 encoding of n bytes.
func (e *Encoding) EncodedLen(n int) int { return e.std.EncodedLen(n) }

// DecodedLen returns the maximum length in bytes of the decoded data
// corresponding to n bytes of base64-encoded data.
func (e *Encoding) DecodedLen(n int) int { return e.std.DecodedLen(n) }

// Encode encodes src, writing [Encoding.EncodedLen](len(src)) bytes to dst.
// Like the stdlib it pads the output; use [NewEncoder] for streams.
func (e *Encoding) Encode(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	n := e.encodePrefix(dst, src)
	e.std.Encode(dst[n/3*4:], src[n:])
}

// AppendEncode appends the base64 encoding of src to dst and returns the
// extended buffer.
func (e *Encoding) AppendEncode(dst, src []byte) []byte {
	n := e.EncodedLen(len(src))
	dst = slices.Grow(dst, n)
	e.Encode(dst[len(dst):][:n], src)
	return dst[:len(dst)+n]
}

// EncodeToString returns the base64 encoding of src.
func (e *Encoding) EncodeToString(src []byte) string {
	buf := make([]byte, e.EncodedLen(len(src)))
	e.Encode(buf, src)
	return string(buf)
}

// Decode decodes src into dst and returns the number of bytes written.
// dst must hold the decoded data ([Encoding.DecodedLen](len(src)) is always
// enough). On malformed input it returns the bytes decoded before the error
// and an [encoding/base64.CorruptInputError] with the offset the standard
// library reports for the same input. CR and LF are ignored.
func (e *Encoding) Decode(dst, src []byte) (n int, err error) {
	if len(src) == 0 {
		return 0, nil
	}
	si, di := 0, 0
	if e.fastDecode(len(src)) {
		for {
			ns, nd := e.decodePrefix(dst[di:], src[si:])
			si += ns
			di += nd
			// The kernel stopped at a quantum that is not four alphabet
			// characters. If it is four alphabet characters broken up by
			// CR/LF, decode it here and give the kernel another go;
			// anything else (padding, an invalid byte, the end) is left to
			// the reference decoder, starting on this quantum boundary.
			ns = e.decodeQuantumNL(dst[di:], src[si:])
			if ns == 0 {
				break
			}
			si += ns
			di += 3
		}
	}
	nd, err := e.std.Decode(dst[di:], src[si:])
	return di + nd, rebase(err, int64(si))
}

// AppendDecode appends the base64 decoded src to dst and returns the
// extended buffer. On malformed input it returns the partially decoded src
// and an [encoding/base64.CorruptInputError].
func (e *Encoding) AppendDecode(dst, src []byte) ([]byte, error) {
	// Size the output without padding, exactly as the stdlib does.
	n := len(src)
	for n > 0 && rune(src[n-1]) == e.padChar {
		n--
	}
	n = n/4*3 + n%4*6/8
	dst = slices.Grow(dst, n)
	n, err := e.Decode(dst[len(dst):][:n], src)
	return dst[:len(dst)+n], err
}

// DecodeString returns the bytes represented by the base64 string s.
// On malformed input it returns the partially decoded data and an
// [encoding/base64.CorruptInputError].
func (e *Encoding) DecodeString(s string) ([]byte, error) {
	buf := make([]byte, e.DecodedLen(len(s)))
	n, err := e.Decode(buf, []byte(s))
	return buf[:n], err
}

// decodeQuantumNL decodes one quantum of four alphabet characters that may be
// interleaved with (and preceded by) CR/LF, the way the stdlib's decodeQuantum
// does. It returns the source bytes consumed, or 0 (nothing written) when the
// quantum holds anything else, runs out of input, or dst has no room.
func (e *Encoding) decodeQuantumNL(dst, src []byte) int {
	if len(dst) < 3 {
		return 0
	}
	t := &e.tables.Decode
	var q [4]byte
	j, si := 0, 0
	for ; j < 4 && si < len(src); si++ {
		c := src[si]
		if v := t[c]; v != 0xFF {
			q[j] = v
			j++
			continue
		}
		if c != '\n' && c != '\r' {
			return 0
		}
	}
	if j < 4 {
		return 0
	}
	v := uint(q[0])<<18 | uint(q[1])<<12 | uint(q[2])<<6 | uint(q[3])
	dst[0], dst[1], dst[2] = byte(v>>16), byte(v>>8), byte(v)
	return si
}

// rebase adds off to the offset of a CorruptInputError and passes any other
// error (including nil) through. The errors it sees come straight from
// encoding/base64, unwrapped.
func rebase(err error, off int64) error {
	if c, ok := err.(base64.CorruptInputError); ok && off != 0 {
		return base64.CorruptInputError(int64(c) + off)
	}
	return err
}
