package bodystream

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// New returns the Stream running write once, over conn with a write
// deadline of timeout renewed before every write that may reach conn.
func New(write func(mcp.StreamWriter) error, conn net.Conn, timeout time.Duration) *Stream {
	return &Stream{write: write, conn: conn, timeout: timeout}
}

// Stream feeds a core/mcp body writer to fasthttp. fasthttp calls
// WriteTo (it implements BodyWriterTo), so no goroutine or pipe sits between
// the writer and the connection. Read is a fallback through a pipe. write
// runs exactly once: Close runs it against a failing writer when fasthttp
// drops the body unsent, so the writer's cleanup (closing storage readers)
// always happens.
type Stream struct {
	write   func(mcp.StreamWriter) error
	conn    net.Conn
	timeout time.Duration
	once    sync.Once
	pr      *io.PipeReader
	dw      deadlineWriter // WriteTo's, here to spare an allocation
}

// SupportsBodyWriteTo implements fasthttp.BodyWriterTo.
func (b *Stream) SupportsBodyWriteTo() bool { return true }

func (b *Stream) WriteTo(w io.Writer) (int64, error) {
	var err error
	ran := false
	dw := &b.dw
	b.once.Do(func() {
		ran = true
		*dw = deadlineWriter{w: w, conn: b.conn, timeout: b.timeout}
		err = b.write(dw)
		if dw.renewed {
			_ = b.conn.SetWriteDeadline(time.Time{})
		}
	})
	if !ran {
		return 0, errors.New("server: body already written")
	}
	return dw.n, err
}

func (b *Stream) Read(p []byte) (int, error) {
	b.once.Do(func() {
		pr, pw := io.Pipe()
		b.pr = pr
		go func() { pw.CloseWithError(b.write(&deadlineWriter{w: pw})) }()
	})
	if b.pr == nil {
		return 0, io.EOF
	}
	return b.pr.Read(p)
}

var errDropped = errors.New("server: response dropped before its body was sent")

func (b *Stream) Close() error {
	b.once.Do(func() { _ = b.write(&deadlineWriter{w: failingWriter{}}) })
	if b.pr != nil {
		b.pr.Close()
	}
	return nil
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDropped }

// deadlineWriter extends the connection's write deadline before every write
// that may reach the connection, so a stalled client fails within timeout
// while a long transfer that keeps moving never does. A write that fits in
// the room left in a *bufio.Writer (fasthttp's) touches no socket and needs
// no deadline: a small response is written without any.
type deadlineWriter struct {
	w       io.Writer
	conn    net.Conn
	timeout time.Duration
	n       int64
	renewed bool // a deadline was set: WriteTo clears it at the end
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if b, ok := d.w.(*bufio.Writer); !ok || len(p) > b.Available() {
		d.renew()
	}
	n, err := d.w.Write(p)
	d.n += int64(n)
	return n, err
}

// SetWriteBuffer asks for a socket send buffer of bytes (SO_SNDBUF), when
// the connection is a socket that takes one: a body writer streaming a large
// body alone uses it to queue more ahead of the client.
func (d *deadlineWriter) SetWriteBuffer(bytes int) error {
	if s, ok := d.conn.(interface{ SetWriteBuffer(int) error }); ok {
		return s.SetWriteBuffer(bytes)
	}
	return nil
}

func (d *deadlineWriter) Flush() error {
	if f, ok := d.w.(interface{ Flush() error }); ok {
		d.renew()
		return f.Flush()
	}
	return nil
}

// renew moves the connection's write deadline to timeout from now.
func (d *deadlineWriter) renew() {
	if d.conn != nil && d.timeout > 0 {
		_ = d.conn.SetWriteDeadline(time.Now().Add(d.timeout))
		d.renewed = true
	}
}
