package bodystream

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// Body is a response body fasthttp writes with WriteTo (its BodyWriterTo)
// and closes once it is sent or dropped: a Stream or a sendfile.Body.
type Body interface {
	io.Reader
	io.WriterTo
	io.Closer
	SupportsBodyWriteTo() bool
}

// Count wraps body so that what it sends is counted and whoever waits for
// its end (the access log, through OnFinish) hears of it once, when fasthttp
// closes it: after the last byte went out, or after the write failed.
func Count(body Body) *Counted { return &Counted{body: body} }

// NewCounted is Count(New(write, conn, timeout)) in one allocation.
func NewCounted(write func(mcp.StreamWriter) error, conn net.Conn, timeout time.Duration) *Counted {
	both := &struct {
		Counted
		Stream
	}{Stream: Stream{write: write, conn: conn, timeout: timeout}}
	both.body = &both.Stream
	return &both.Counted
}

// Counted is a Body that counts the bytes it hands the connection. After a
// failed write, the bytes still held in the connection's write buffer are
// not counted: what is left is what the kernel accepted. (After a good
// one, the buffer's last bytes are flushed once the body is done.)
type Counted struct {
	body   Body
	sent   atomic.Int64
	mu     sync.Mutex
	closed bool
	finish func(sent int64)
}

// SupportsBodyWriteTo implements fasthttp.BodyWriterTo.
func (c *Counted) SupportsBodyWriteTo() bool { return c.body.SupportsBodyWriteTo() }

func (c *Counted) WriteTo(w io.Writer) (int64, error) {
	n, err := c.body.WriteTo(w)
	sent := n
	if b, ok := w.(interface{ Buffered() int }); ok && err != nil {
		sent = max(n-int64(b.Buffered()), 0)
	}
	c.sent.Add(sent)
	return n, err
}

func (c *Counted) Read(p []byte) (int, error) {
	n, err := c.body.Read(p)
	c.sent.Add(int64(n))
	return n, err
}

// Close closes the body, then calls the OnFinish func with the bytes sent.
func (c *Counted) Close() error {
	err := c.body.Close()
	c.mu.Lock()
	f := c.finish
	c.closed, c.finish = true, nil
	c.mu.Unlock()
	if f != nil {
		f(c.sent.Load())
	}
	return err
}

// OnFinish has f called once with the bytes sent when the body is closed
// (at once if it already is). A later call replaces an earlier f.
func (c *Counted) OnFinish(f func(sent int64)) {
	c.mu.Lock()
	if !c.closed {
		c.finish = f
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	f(c.sent.Load())
}
