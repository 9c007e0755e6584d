package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/storage"
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

// blobBody is a ReadResourceResult for one stored object, written straight
// from storage: prefix, then base64 (or JSON-escaped text) in chunks, then
// suffix. Its length is known before the first byte goes out.
type blobBody struct {
	prefix, suffix []byte
	rc             io.ReadCloser
	n              int64 // raw bytes to read
	encLen         int64 // length of the encoded middle part
	text           bool
}

func (b *blobBody) size() int64 { return int64(len(b.prefix)) + b.encLen + int64(len(b.suffix)) }

func (b *blobBody) close() {
	if b.rc != nil {
		b.rc.Close()
		b.rc = nil
	}
}

func (b *blobBody) writeTo(w io.Writer) error {
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

// errShortObject means storage returned fewer bytes than its Info promised.
var errShortObject = errors.New("mcp: object shorter than its recorded size")

// writeBase64 streams n bytes of r to w as standard padded base64.
func writeBase64(w io.Writer, r io.Reader, n int64) error {
	inp := rawPool.Get().(*[]byte)
	outp := b64Pool.Get().(*[]byte)
	defer rawPool.Put(inp)
	defer b64Pool.Put(outp)
	in, out := *inp, *outp
	for n > 0 {
		k := int64(len(in))
		if n < k {
			k = n
		}
		m, err := io.ReadFull(r, in[:k])
		if m > 0 {
			e := codec.StdEncoding.EncodedLen(m)
			codec.StdEncoding.Encode(out[:e], in[:m])
			if _, werr := w.Write(out[:e]); werr != nil {
				return werr
			}
			n -= int64(m)
		}
		if err != nil {
			if n > 0 {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return errShortObject
				}
				return err
			}
			break
		}
	}
	return nil
}

// escapedLen is the length of b inside a JSON string.
func escapedLen(b []byte) int64 {
	var n int64
	for _, c := range b {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

func appendEscaped(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i, c := range b {
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '\b':
			esc = `\b`
		case '\f':
			esc = `\f`
		default:
			if c >= 0x20 {
				continue
			}
		}
		dst = append(dst, b[start:i]...)
		if esc != "" {
			dst = append(dst, esc...)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	return append(dst, b[start:]...)
}

// writeEscaped streams n bytes of r to w as the inside of a JSON string.
// Only ASCII bytes are escaped, so chunk boundaries inside a UTF-8 sequence
// are harmless.
func writeEscaped(w io.Writer, r io.Reader, n int64) error {
	in := make([]byte, textChunk)
	out := make([]byte, 0, textChunk*6)
	for n > 0 {
		k := int64(len(in))
		if n < k {
			k = n
		}
		m, err := io.ReadFull(r, in[:k])
		if m > 0 {
			out = appendEscaped(out[:0], in[:m])
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
			n -= int64(m)
		}
		if err != nil {
			if n > 0 {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return errShortObject
				}
				return err
			}
			break
		}
	}
	return nil
}

// scanText reads n bytes of r and reports whether they are valid UTF-8 and
// their JSON-escaped length.
func scanText(r io.Reader, n int64) (bool, int64, error) {
	buf := make([]byte, textChunk+utf8.UTFMax)
	carry := 0
	var total int64
	for n > 0 {
		k := int64(textChunk)
		if n < k {
			k = n
		}
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
		total += escapedLen(data[:cut])
		carry = copy(buf, data[cut:])
		if err != nil {
			if n > 0 {
				return false, 0, errShortObject
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

// newBlobBody prepares the streamed result for an opened object. Text media
// types up to MaxTextBytes are checked in a first pass (UTF-8 validity and
// escaped length) and then re-read from the start: by seeking when the
// reader can, else by opening again and checking that the ETag did not
// change. Everything else is base64.
func (s *Server) newBlobBody(ctx context.Context, key, uri string, rc io.ReadCloser, info storage.Info, head obj) (*blobBody, error) {
	mt := mediaType(info)
	asText := false
	var encLen int64
	if isTextMediaType(mt) && info.Size <= s.opts.MaxTextBytes {
		ok, n, err := scanText(rc, info.Size)
		if err != nil {
			return nil, fmt.Errorf("mcp: read %q: %w", key, err)
		}
		if sk, isSeeker := rc.(io.Seeker); isSeeker {
			if _, err := sk.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("mcp: rewind %q: %w", key, err)
			}
		} else {
			rc.Close()
			var info2 storage.Info
			var err error
			rc, info2, err = s.backend.Open(ctx, key, nil)
			if err != nil {
				return nil, fmt.Errorf("mcp: reopen %q: %w", key, err)
			}
			if info2.ETag != info.ETag || info2.Size != info.Size {
				ok, info = false, info2 // changed in between: serve the new version as a blob
				mt = mediaType(info)
			}
		}
		asText, encLen = ok, n
	}
	if !asText {
		if info.Size < 0 || info.Size > 1<<50 {
			return nil, fmt.Errorf("mcp: object %q has unusable size %d", key, info.Size)
		}
		encLen = (info.Size + 2) / 3 * 4
	}
	var prefix []byte
	if head != nil {
		h, err := json.Marshal(head)
		if err != nil {
			return nil, fmt.Errorf("mcp: encode result head: %w", err)
		}
		prefix = append(prefix, h[:len(h)-1]...)
		prefix = append(prefix, ',')
	} else {
		prefix = append(prefix, '{')
	}
	prefix = append(prefix, `"contents":[{"uri":`...)
	prefix = append(prefix, jsonString(uri)...)
	prefix = append(prefix, `,"mimeType":`...)
	prefix = append(prefix, jsonString(mt)...)
	if asText {
		prefix = append(prefix, `,"text":"`...)
	} else {
		prefix = append(prefix, `,"blob":"`...)
	}
	return &blobBody{prefix: prefix, suffix: []byte(`"}]}`), rc: rc, n: info.Size, encLen: encLen, text: asText}, nil
}
