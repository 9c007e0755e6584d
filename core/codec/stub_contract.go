package codec

// Temporary: the codec owner replaces this file with the real SIMD codec.
// The exported API mirrors encoding/base64 so callers can build now.

import (
	"encoding/base64"
	"io"
)

// Encoding is a base64 encoding with the encoding/base64 API.
type Encoding struct{ std *base64.Encoding }

var (
	StdEncoding    = &Encoding{base64.StdEncoding}
	URLEncoding    = &Encoding{base64.URLEncoding}
	RawStdEncoding = &Encoding{base64.RawStdEncoding}
	RawURLEncoding = &Encoding{base64.RawURLEncoding}
)

func (e *Encoding) Encode(dst, src []byte)                       { e.std.Encode(dst, src) }
func (e *Encoding) Decode(dst, src []byte) (int, error)          { return e.std.Decode(dst, src) }
func (e *Encoding) AppendEncode(dst, src []byte) []byte          { return e.std.AppendEncode(dst, src) }
func (e *Encoding) AppendDecode(dst, src []byte) ([]byte, error) { return e.std.AppendDecode(dst, src) }
func (e *Encoding) EncodeToString(src []byte) string             { return e.std.EncodeToString(src) }
func (e *Encoding) DecodeString(s string) ([]byte, error)        { return e.std.DecodeString(s) }
func (e *Encoding) EncodedLen(n int) int                         { return e.std.EncodedLen(n) }
func (e *Encoding) DecodedLen(n int) int                         { return e.std.DecodedLen(n) }

// NewEncoder returns a streaming encoder; Close flushes the final partial group.
func NewEncoder(enc *Encoding, w io.Writer) io.WriteCloser { return base64.NewEncoder(enc.std, w) }

// NewDecoder returns a streaming decoder.
func NewDecoder(enc *Encoding, r io.Reader) io.Reader { return base64.NewDecoder(enc.std, r) }
