package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// Chunk sizes of the streaming writers. rawChunk is a multiple of 3 so every
// chunk but the last encodes to base64 without padding.
const (
	rawChunk  = 192 << 10
	b64Chunk  = rawChunk / 3 * 4
	textChunk = 32 << 10
)

var (
	rawPool = sync.Pool{New: func() any { b := make([]byte, rawChunk); return &b }}
	b64Pool = sync.Pool{New: func() any { b := make([]byte, b64Chunk); return &b }}
)

// bodyResult is a ReadResourceResult whose contents stream from a reader:
// prefix, then base64 (or JSON-escaped text) in chunks, then suffix. Its
// length is known before the first byte goes out.
type bodyResult struct {
	prefix, suffix []byte
	rc             io.ReadCloser
	n              int64 // raw bytes to read
	encLen         int64 // length of the encoded middle part
	text           bool
}

func (b *bodyResult) size() int64 { return int64(len(b.prefix)) + b.encLen + int64(len(b.suffix)) }

func (b *bodyResult) close() {
	if b.rc != nil {
		b.rc.Close()
		b.rc = nil
	}
}

func (b *bodyResult) writeTo(w io.Writer) error {
	if _, err := w.Write(b.prefix); err != nil {
		return err
	}
	var err error
	if b.text {
		err = writeEscaped(w, b.rc, b.n)
	} else {
		err = writeBase64(w, b.rc, b.n)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b.suffix)
	return err
}

// errShortBody means a contents body ended before its Size.
var errShortBody = errors.New("mcp: resource body shorter than its size")

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
					return errShortBody
				}
				return err
			}
			break
		}
	}
	return nil
}

// writeBase64 streams n bytes of r to w as standard padded base64.
func writeBase64(w io.Writer, r io.Reader, n int64) error {
	inp := rawPool.Get().(*[]byte)
	outp := b64Pool.Get().(*[]byte)
	defer rawPool.Put(inp)
	defer b64Pool.Put(outp)
	out := *outp
	return copyChunks(r, n, *inp, func(in []byte) error {
		e := codec.StdEncoding.EncodedLen(len(in))
		codec.StdEncoding.Encode(out[:e], in)
		_, err := w.Write(out[:e])
		return err
	})
}

// writeEscaped streams n bytes of r to w as the inside of a JSON string.
// Only ASCII bytes are escaped, so chunk boundaries inside a UTF-8 sequence
// are harmless.
func writeEscaped(w io.Writer, r io.Reader, n int64) error {
	out := make([]byte, 0, textChunk*6)
	return copyChunks(r, n, make([]byte, textChunk), func(in []byte) error {
		out = scan.AppendEscaped(out[:0], in)
		_, err := w.Write(out)
		return err
	})
}

// ScanText reads n bytes of r and reports whether they are valid UTF-8 and
// their JSON-escaped length: what [Contents].TextLen needs. Serve text
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
				return false, 0, errShortBody
			}
			break
		}
	}
	return carry == 0, total, nil
}

func jsonString(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("bug: string does not marshal")
	}
	return b
}

// readResult is the resources/read answer for ct: an Object for small
// contents, a bodyResult for a Body.
func (s *Server) readResult(c *Call, ct *Contents) (any, error) {
	if ct.Body == nil {
		item := Object{"uri": ct.URI}
		if ct.MIMEType != "" {
			item["mimeType"] = ct.MIMEType
		}
		if ct.Blob == nil {
			item["text"] = ct.Text
		} else {
			item["blob"] = ct.Blob
		}
		return Object{"contents": []any{item}}, nil
	}
	encLen := ct.TextLen
	if !ct.BodyText {
		if ct.Size < 0 || ct.Size > 1<<50 {
			ct.Body.Close()
			return nil, fmt.Errorf("mcp: resource %q has unusable size %d", ct.URI, ct.Size)
		}
		encLen = (ct.Size + 2) / 3 * 4
	}
	prefix := []byte{'{'}
	if c.modern {
		head := Object{"resultType": "complete", "_meta": Object{metaServerInfo: s.serverInfo()}}
		s.addCacheHints(head)
		h, err := json.Marshal(head)
		if err != nil {
			ct.Body.Close()
			return nil, fmt.Errorf("mcp: encode result head: %w", err)
		}
		prefix = append(h[:len(h)-1], ',')
	}
	prefix = append(prefix, `"contents":[{"uri":`...)
	prefix = append(prefix, jsonString(ct.URI)...)
	prefix = append(prefix, `,"mimeType":`...)
	prefix = append(prefix, jsonString(ct.MIMEType)...)
	if ct.BodyText {
		prefix = append(prefix, `,"text":"`...)
	} else {
		prefix = append(prefix, `,"blob":"`...)
	}
	return &bodyResult{prefix: prefix, suffix: []byte(`"}]}`), rc: ct.Body, n: ct.Size, encLen: encLen, text: ct.BodyText}, nil
}
