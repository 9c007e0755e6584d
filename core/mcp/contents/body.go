package contents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// textChunk is how many raw bytes the text writer escapes at a time; its
// output buffer holds the worst case, 6 bytes out per byte in.
const textChunk = 32 << 10

var (
	textInPool  = sync.Pool{New: func() any { b := make([]byte, textChunk); return &b }}
	textOutPool = sync.Pool{New: func() any { b := make([]byte, 0, textChunk*6); return &b }}
)

// Body is a ReadResourceResult whose contents stream from a reader:
// Prefix, then base64 (or JSON-escaped text) in chunks, then Suffix. Its
// length is known before the first byte goes out.
type Body struct {
	Prefix, Suffix []byte
	Reader         io.ReadCloser // the raw contents; Close closes it
	N              int64         // raw bytes to read from Reader
	EncodedLen     int64         // length of the encoded middle part
	Text           bool          // JSON-escaped text rather than base64
}

// NewReadBody is the resources/read result of size bytes of r at uri:
// head's members (a JSON object's, or nil), then the one item of
// "contents", its text (JSON-escaped, textLen bytes) or blob (base64).
func NewReadBody(head []byte, uri, mimeType string, r io.ReadCloser, size, textLen int64, text bool) (*Body, error) {
	encLen := textLen
	if !text {
		if size < 0 || size > 1<<50 {
			r.Close()
			return nil, fmt.Errorf("mcp: resource %q has unusable size %d", uri, size)
		}
		encLen = (size + 2) / 3 * 4
	}
	prefix := append(make([]byte, 0, len(head)+64+len(uri)+len(mimeType)), '{')
	if len(head) > 0 {
		prefix = append(append(prefix[:0], head[:len(head)-1]...), ',')
	}
	prefix = append(prefix, `"contents":[{"uri":`...)
	prefix = appendJSONString(prefix, uri)
	prefix = append(prefix, `,"mimeType":`...)
	prefix = appendJSONString(prefix, mimeType)
	if text {
		prefix = append(prefix, `,"text":"`...)
	} else {
		prefix = append(prefix, `,"blob":"`...)
	}
	return &Body{Prefix: prefix, Suffix: []byte(`"}]}`), Reader: r, N: size, EncodedLen: encLen, Text: text}, nil
}

// appendJSONString appends s as json.Marshal encodes it. Plain ASCII with
// nothing to escape (every blob URI and media type the store writes) is
// copied between quotes; anything else goes through json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(s)
			if err != nil {
				panic("bug: string does not marshal")
			}
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// Size is the length of the whole result, Prefix and Suffix included.
func (b *Body) Size() int64 { return int64(len(b.Prefix)) + b.EncodedLen + int64(len(b.Suffix)) }

// Close closes Reader; calling it again does nothing.
func (b *Body) Close() {
	if b.Reader != nil {
		b.Reader.Close()
		b.Reader = nil
	}
}

// Encode writes the whole result to w: Prefix, N bytes of Reader encoded,
// Suffix. A Reader shorter than N fails with [ErrShortBody].
func (b *Body) Encode(w io.Writer) error {
	if _, err := w.Write(b.Prefix); err != nil {
		return err
	}
	var err error
	if b.Text {
		err = writeEscaped(w, b.Reader, b.N)
	} else {
		err = writeBase64(w, b.Reader, b.N)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b.Suffix)
	return err
}

// ErrShortBody means a contents body ended before its size.
var ErrShortBody = errors.New("mcp: resource body shorter than its size")

// copyChunks reads n bytes of r in chunks of len(in) and hands each to emit.
func copyChunks(r io.Reader, n int64, in []byte, emit func([]byte) error) error {
	for n > 0 {
		k := min(int64(len(in)), n)
		m, err := io.ReadFull(r, in[:k])
		if m > 0 {
			if werr := emit(in[:m]); werr != nil {
				return werr
			}
			n -= int64(m)
		}
		if err != nil {
			if n > 0 {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return ErrShortBody
				}
				return err
			}
			break
		}
	}
	return nil
}

// writeEscaped streams n bytes of r to w as the inside of a JSON string.
// Only ASCII bytes are escaped, so chunk boundaries inside a UTF-8 sequence
// are harmless.
func writeEscaped(w io.Writer, r io.Reader, n int64) error {
	inp := textInPool.Get().(*[]byte)
	outp := textOutPool.Get().(*[]byte)
	defer textInPool.Put(inp)
	defer textOutPool.Put(outp)
	return copyChunks(r, n, *inp, func(in []byte) error {
		*outp = scan.AppendEscaped((*outp)[:0], in)
		_, err := w.Write(*outp)
		return err
	})
}

// ScanText reads n bytes of r and reports whether they are valid UTF-8 and
// their JSON-escaped length: what mcp.Contents.TextLen needs. Serve text
// found this way from a fresh reader (seek back, or reopen and check the
// object did not change).
func ScanText(r io.Reader, n int64) (bool, int64, error) {
	buf := make([]byte, textChunk+utf8.UTFMax)
	carry := 0
	var total int64
	for n > 0 {
		k := min(int64(textChunk), n)
		m, err := io.ReadFull(r, buf[carry:carry+int(k)])
		n -= int64(m)
		data := buf[:carry+m]
		cut := len(data)
		for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
			if utf8.RuneStart(data[i]) {
				if !utf8.FullRune(data[i:]) {
					cut = i
				}
				break
			}
		}
		if !utf8.Valid(data[:cut]) {
			return false, 0, nil
		}
		total += scan.EscapedLen(data[:cut])
		carry = copy(buf, data[cut:])
		if err != nil {
			if n > 0 {
				return false, 0, ErrShortBody
			}
			break
		}
	}
	return carry == 0, total, nil
}
