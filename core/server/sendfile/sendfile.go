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

// FirstRound is how many bytes the body's first sendfile round moves at
// most; rounds of Chunk follow. The headers ride corked with the first
// bytes, and a first call asking for a whole Chunk returns only once the
// kernel has queued megabytes (4 MiB and more on loopback, ~0.5–1 ms in
// the kernel); traced, the client's first read came about when that call
// returned. A small first call returns at once. On a loaded 2-core
// loopback rig (server and client pinned to different cores, 30–40 GETs
// of 256 MiB per series, alternated) the median first body byte came
// 0.66–1.9 ms after the request before and 0.52–0.79 ms after, the same
// throughput; with the machine lightly loaded both measured 0.52–0.64 ms
// (nginx, same sendfile and cork: 0.29–0.41 ms).
const FirstRound = 64 << 10

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

// drainWait bounds how long the body's last byte waits for the socket to
// drain (see [Body.WriteTo]); past it, or past the write timeout if that
// is shorter, the byte goes out anyway.
const drainWait = time.Second

// Body sends n bytes of f from its current offset with sendfile(2).
// fasthttp calls WriteTo (BodyWriterTo) with its *bufio.Writer over the
// connection: WriteTo flushes the headers, then hands the file to
// bufio.Writer.ReadFrom, which with an empty buffer calls
// (*net.TCPConn).ReadFrom, which uses sendfile for an *io.LimitedReader over
// an *os.File, first FirstRound bytes, then rounds of Chunk. The deadline
// is renewed per round. The socket is corked
// (cork_linux.go) for all but the body's last byte, which goes out by a
// sendfile of its own once the rest has left (see WriteTo).
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

// WriteTo sends the headers buffered in w, then the body. Over a socket
// the body's last byte is held back: the rest goes out corked, the cork is
// pulled, and once the socket has sent everything and its congestion
// window has room (drained), that byte goes out by a send call of its own.
//
// Why: the kernel decides whether a flow is application-limited only at a
// send call, so a response's final segment, released by the uncork, was
// never marked so. Its ACK comes late: a client delays the ACK of a lone
// sub-MSS segment (40 ms, or until its next request on a kept-alive
// connection), and the rate sample that ACK gives, one segment over the
// idle gap, went unmarked into the sender's congestion control. BBR (this
// kernel's default) took it as the path's bandwidth, a few MB/s, and paced
// the connection's next response at it: on loopback ~10% of 1 MiB Range
// GETs finished ~45 ms late, their 64 KB segments 10-20 ms apart. A send
// made when nothing is queued and the window has room is marked
// application-limited, and so is the sample of its ACK, which congestion
// control then ignores unless it is higher than the estimate.
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	uncork := func() {}
	if b.conn != nil {
		uncork = cork(b.conn)
	}
	defer func() { uncork() }()
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
	var last int64
	if b.conn != nil && b.n > 0 {
		last = 1
	}
	total, err := b.send(rf, min(b.n-last, FirstRound))
	if err == nil {
		var m int64
		m, err = b.send(rf, b.n-last-total)
		total += m
	}
	if err != nil || last == 0 {
		return total, b.done(err)
	}
	uncork()
	uncork = func() {}
	b.awaitDrain()
	m, err := b.send(rf, last)
	return total + m, b.done(err)
}

// send moves n bytes of f to rf in rounds of at most Chunk, renewing the
// write deadline before each.
func (b *Body) send(rf io.ReaderFrom, n int64) (int64, error) {
	var total int64
	for total < n {
		if err := b.renew(); err != nil {
			return total, err
		}
		chunk := min(n-total, Chunk)
		m, err := rf.ReadFrom(&io.LimitedReader{R: b.f, N: chunk})
		total += m
		if err != nil {
			return total, err
		}
		if m < chunk {
			return total, io.ErrUnexpectedEOF // the file shrank under us
		}
	}
	return total, nil
}

// awaitDrain waits until the socket is drained, polling TCP_INFO with a
// backoff from 10 µs to 1 ms, for at most drainWait or the write timeout.
// On loopback that is one ACK away, microseconds.
func (b *Body) awaitDrain() {
	limit := drainWait
	if b.timeout > 0 {
		limit = min(limit, b.timeout)
	}
	end := time.Now().Add(limit)
	for wait := 10 * time.Microsecond; !drained(b.conn) && time.Now().Before(end); wait = min(2*wait, time.Millisecond) {
		time.Sleep(wait)
	}
}

// done clears the write deadline after a body sent in full.
func (b *Body) done(err error) error {
	if err == nil && b.conn != nil && b.timeout > 0 {
		_ = b.conn.SetWriteDeadline(time.Time{})
	}
	return err
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
