package resstream

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Check holds a handler's answer to what the client allows, so
// no handler has to: an answer over the client's maxStreamSize is refused
// (-32004) before any byte is read, a direct body is cut at its declared
// Size, and a body of unknown size (Size < 0) fails once it passes
// maxSize, which cuts the response. An answer without a URI names the
// requested one.
func Check(uri string, a *Answer, maxSize int64) (*Answer, error) {
	if a == nil {
		return nil, errors.New("resstream: resources/stream handler returned no answer")
	}
	modes := 0
	for _, set := range []bool{a.Body != nil, a.Location != "", a.DownloadURL != ""} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		closeBody(a)
		return nil, fmt.Errorf("resstream: answer for %q sets %d of Body, Location and DownloadURL, want 1", uri, modes)
	}
	if a.URI == "" {
		a.URI = uri
	}
	if maxSize > 0 && a.Size > maxSize && a.Location == "" {
		closeBody(a)
		return nil, TooLarge(uri, a.Size, maxSize)
	}
	if a.Body != nil {
		if a.Size >= 0 {
			a.Body = &boundedBody{ReadCloser: a.Body, left: a.Size}
		} else if maxSize > 0 {
			a.Body = &boundedBody{ReadCloser: a.Body, left: maxSize, strict: true, maxSize: maxSize}
		}
	}
	return a, nil
}

func closeBody(a *Answer) {
	if a.Body != nil {
		a.Body.Close()
	}
}

// ErrOverMaxStreamSize is the error a resources/stream body of unknown
// size fails with once it passes the client's maxStreamSize: the transport
// cuts the response, so the client sees a broken body, never a truncated
// one that looks whole.
var ErrOverMaxStreamSize = errors.New("resstream: body is longer than the client's maxStreamSize")

// boundedBody ends a direct answer's body after left bytes: the declared
// Size (the rest is never read), or, strict, the client's maxStreamSize for
// a body of unknown size, past which it fails with ErrOverMaxStreamSize.
type boundedBody struct {
	io.ReadCloser
	left    int64
	strict  bool
	maxSize int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if !b.strict {
			return 0, io.EOF
		}
		var one [1]byte
		if n, _ := io.ReadFull(b.ReadCloser, one[:]); n > 0 {
			return 0, fmt.Errorf("%w (%d bytes)", ErrOverMaxStreamSize, b.maxSize)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// Unwrap returns the handler's body, so [BodyFile] finds a file under it.
// A transport that sends the file directly sends at most the answer's Size
// bytes, and only when the Size is known.
func (b *boundedBody) Unwrap() io.ReadCloser { return b.ReadCloser }

// FileBody is a resources/stream Body whose bytes are those of an open
// regular file from its current offset: a transport sends them with
// sendfile(2) where it can (package mcphttp through net/http's ReadFrom). An *os.File is one as it is; a wrapper that must
// also release something on Close returns the file it reads from OSFile.
type FileBody interface {
	io.ReadCloser
	OSFile() *os.File
}

// BodyFile returns the file a body reads from, for sendfile: the body
// itself when it is an *os.File, its OSFile when it is a [FileBody], and
// the same through wrappers that offer Unwrap() io.ReadCloser (the core
// wraps every direct body so). ok is false for any other body.
func BodyFile(body io.Reader) (f *os.File, ok bool) {
	for range 8 {
		switch v := body.(type) {
		case *os.File:
			return v, true
		case FileBody:
			return v.OSFile(), v.OSFile() != nil
		case interface{ Unwrap() io.ReadCloser }:
			body = v.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}
