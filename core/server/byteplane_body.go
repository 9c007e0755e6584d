package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
)

// sendfileChunk is how many bytes one sendfile round moves before the write
// deadline is pushed out again: a stalled client fails within WriteTimeout,
// a long transfer that keeps moving never does.
const sendfileChunk = 16 << 20

// SendBody implements mcp.BodySender (resources/stream direct mode).
func (r *responseAdapter) SendBody(rc io.ReadCloser, size int64) {
	sendReader(r.ctx, rc, size, r.timeout)
}

// sendReader makes rc (size bytes) the response body and closes it once sent
// or dropped. Local files (an *os.File, or a *storage.LimitedFile for a
// range, possibly wrapped by something with Unwrap() io.ReadCloser) go out
// by sendfile(2); anything else (S3 bodies) is copied through a pooled
// buffer. Memory stays flat either way.
func sendReader(ctx *fasthttp.RequestCtx, rc io.ReadCloser, size int64, timeout time.Duration) {
	if f, n, ok := localFile(rc); ok && n == size {
		ctx.Response.SetBodyStream(&fileBody{f: f, n: n, closer: rc, conn: ctx.Conn(), timeout: timeout}, int(size))
		return
	}
	ctx.Response.SetBodyStream(&bodyStream{conn: ctx.Conn(), timeout: timeout, write: func(w mcp.StreamWriter) error {
		defer rc.Close()
		bp := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(bp)
		n, err := io.CopyBuffer(w, struct{ io.Reader }{rc}, *bp)
		if err == nil && n != size {
			err = io.ErrUnexpectedEOF
		}
		return err
	}}, int(size))
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// localFile finds the file behind a storage reader: the file and how many
// bytes to send from its current offset.
func localFile(rc io.ReadCloser) (*os.File, int64, bool) {
	for range 4 {
		switch v := rc.(type) {
		case *os.File:
			fi, err := v.Stat()
			if err != nil || !fi.Mode().IsRegular() {
				return nil, 0, false
			}
			off, err := v.Seek(0, io.SeekCurrent)
			if err != nil {
				return nil, 0, false
			}
			return v, fi.Size() - off, true
		case *storage.LimitedFile:
			return v.File, v.N, true
		case interface{ Unwrap() io.ReadCloser }:
			rc = v.Unwrap()
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// fileBody sends n bytes of f from its current offset with sendfile(2).
// fasthttp calls WriteTo (BodyWriterTo) with its *bufio.Writer over the
// connection: WriteTo flushes the headers, then hands the file to
// bufio.Writer.ReadFrom, which with an empty buffer calls
// (*net.TCPConn).ReadFrom, which uses sendfile for an *io.LimitedReader over
// an *os.File. The deadline is renewed per sendfileChunk.
type fileBody struct {
	f       *os.File
	n       int64
	closer  io.Closer
	conn    net.Conn
	timeout time.Duration
	once    sync.Once
	lr      *io.LimitedReader // Read fallback
}

// SupportsBodyWriteTo implements fasthttp.BodyWriterTo.
func (b *fileBody) SupportsBodyWriteTo() bool { return true }

func (b *fileBody) WriteTo(w io.Writer) (int64, error) {
	if f, ok := w.(interface{ Flush() error }); ok {
		if err := b.renew(); err != nil {
			return 0, err
		}
		if err := f.Flush(); err != nil {
			return 0, err
		}
	}
	rf, ok := w.(io.ReaderFrom)
	if !ok {
		rf = readerFromWriter{w}
	}
	var total int64
	for total < b.n {
		if err := b.renew(); err != nil {
			return total, err
		}
		chunk := min(b.n-total, sendfileChunk)
		m, err := rf.ReadFrom(&io.LimitedReader{R: b.f, N: chunk})
		total += m
		if err != nil {
			return total, err
		}
		if m < chunk {
			return total, io.ErrUnexpectedEOF // the file shrank under us
		}
	}
	if b.conn != nil && b.timeout > 0 {
		_ = b.conn.SetWriteDeadline(time.Time{})
	}
	return total, nil
}

func (b *fileBody) renew() error {
	if b.conn != nil && b.timeout > 0 {
		return b.conn.SetWriteDeadline(time.Now().Add(b.timeout))
	}
	return nil
}

func (b *fileBody) Read(p []byte) (int, error) {
	if b.lr == nil {
		b.lr = &io.LimitedReader{R: b.f, N: b.n}
	}
	return b.lr.Read(p)
}

func (b *fileBody) Close() error {
	var err error
	b.once.Do(func() { err = b.closer.Close() })
	return err
}

type readerFromWriter struct{ io.Writer }

func (w readerFromWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(w.Writer, r)
}

// errShortBody reports a request body that ended before its Content-Length
// (shared with the upload endpoints).
var errShortBody = errors.New("server: request body ended early")
