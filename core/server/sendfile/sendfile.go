package sendfile

import (
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Chunk is how many bytes one sendfile round moves before the write
// deadline is pushed out again: a stalled client fails within WriteTimeout,
// a long transfer that keeps moving never does.
const Chunk = 16 << 20

// NewBody returns the Body sending n bytes of f from its current offset
// over conn; closer is closed once, when the body is done.
func NewBody(f *os.File, n int64, closer io.Closer, conn net.Conn, timeout time.Duration) *Body {
	return &Body{f: f, n: n, closer: closer, conn: conn, timeout: timeout}
}

// Local finds the file behind a storage reader: the file and how many
// bytes to send from its current offset.
func Local(rc io.ReadCloser) (*os.File, int64, bool) {
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

// Body sends n bytes of f from its current offset with sendfile(2).
// fasthttp calls WriteTo (BodyWriterTo) with its *bufio.Writer over the
// connection: WriteTo flushes the headers, then hands the file to
// bufio.Writer.ReadFrom, which with an empty buffer calls
// (*net.TCPConn).ReadFrom, which uses sendfile for an *io.LimitedReader over
// an *os.File. The deadline is renewed per Chunk, and the socket is
// corked for the whole body (cork_linux.go).
type Body struct {
	f       *os.File
	n       int64
	closer  io.Closer
	conn    net.Conn
	timeout time.Duration
	once    sync.Once
	lr      *io.LimitedReader // Read fallback
}

// SupportsBodyWriteTo implements fasthttp.BodyWriterTo.
func (b *Body) SupportsBodyWriteTo() bool { return true }

func (b *Body) WriteTo(w io.Writer) (int64, error) {
	if b.conn != nil {
		defer cork(b.conn)()
	}
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
		rf = readerFrom{w}
	}
	var total int64
	for total < b.n {
		if err := b.renew(); err != nil {
			return total, err
		}
		chunk := min(b.n-total, Chunk)
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

func (b *Body) renew() error {
	if b.conn != nil && b.timeout > 0 {
		return b.conn.SetWriteDeadline(time.Now().Add(b.timeout))
	}
	return nil
}

func (b *Body) Read(p []byte) (int, error) {
	if b.lr == nil {
		b.lr = &io.LimitedReader{R: b.f, N: b.n}
	}
	return b.lr.Read(p)
}

func (b *Body) Close() error {
	var err error
	b.once.Do(func() { err = b.closer.Close() })
	return err
}

type readerFrom struct{ io.Writer }

func (w readerFrom) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(w.Writer, r)
}
