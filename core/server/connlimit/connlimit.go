package connlimit

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/core/server/linger"
)

// Listener is a net.Listener that bounds the connections served at once
// and those from one client address (see the package documentation).
type Listener struct {
	net.Listener
	max   int // per address; 0: no bound
	total int // all addresses; 0: no bound
	mu    sync.Mutex
	n     map[string]int
	open  int
}

// RetryAfter is the Retry-After, in seconds, of a refused connection.
const RetryAfter = 1

// New returns ln limited to total connections at once and max per client
// address; 0 leaves either unbounded.
func New(ln net.Listener, max, total int) *Listener {
	return &Listener{Listener: ln, max: max, total: total, n: map[string]int{}}
}

// Accept returns the next connection within the limit, refusing the
// others on the way.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := c.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(ip); err == nil {
			ip = h
		}
		if r := l.admit(ip); r != nil {
			refuseConn(c, r)
			continue
		}
		return &conn{Conn: c, l: l, ip: ip}, nil
	}
}

// refusal is the answer to a connection over a bound.
type refusal struct{ status, body string }

var (
	overTotal = &refusal{"503 Service Unavailable",
		`{"error":{"code":"busy","message":"too many connections to this server; retry later"}}`}
	overAddress = &refusal{"429 Too Many Requests",
		`{"error":{"code":"too_many_connections","message":"too many connections from this address; retry later"}}`}
)

// admit counts a connection from ip in, or returns why it is refused.
func (l *Listener) admit(ip string) *refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total > 0 && l.open >= l.total:
		return overTotal
	case l.max > 0 && l.n[ip] >= l.max:
		return overAddress
	}
	l.open++
	l.n[ip]++
	return nil
}

// refuseConn answers c with r and closes it, giving a client that does not
// read 100 ms.
func refuseConn(c net.Conn, r *refusal) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = io.WriteString(c, "HTTP/1.1 "+r.status+"\r\nContent-Type: application/json\r\nRetry-After: "+
		strconv.Itoa(RetryAfter)+"\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(r.body))+"\r\n\r\n"+r.body)
	_ = c.Close()
}

func (l *Listener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.n[ip]--; l.n[ip] <= 0 {
		delete(l.n, ip)
	}
}

// conn is a counted connection; Close gives its place back once.
type conn struct {
	net.Conn
	l  *Listener
	ip string
	// state is closedBit once Close ran, plus the Reads under way: one
	// word, so a Read either starts before the close (which then closes at
	// once, waking it) or sees the close and leaves the socket alone.
	state atomic.Int32
}

const closedBit = 1 << 30

func (c *conn) Read(p []byte) (int, error) {
	defer c.state.Add(-1)
	if c.state.Add(1)&closedBit != 0 {
		return 0, net.ErrClosed
	}
	return c.Conn.Read(p)
}

// SetDeadline and SetReadDeadline do nothing once Close ran: a lingering
// close's reads keep their own deadline.
func (c *conn) SetDeadline(t time.Time) error {
	if c.state.Load()&closedBit != 0 {
		return net.ErrClosed
	}
	return c.Conn.SetDeadline(t)
}

func (c *conn) SetReadDeadline(t time.Time) error {
	if c.state.Load()&closedBit != 0 {
		return net.ErrClosed
	}
	return c.Conn.SetReadDeadline(t)
}

// Close gives the place back and closes: with a lingering close
// (core/server/linger), so a client still sending a body the server did
// not read gets the answer, not a reset; at once when a Read is under way
// (an idle connection closed at shutdown), which the close wakes.
func (c *conn) Close() error {
	old := c.state.Or(closedBit)
	switch {
	case old&closedBit != 0:
		return nil // closed before
	case old > 0:
		_ = c.Conn.Close()
	default:
		linger.Close(c.Conn)
	}
	c.l.release(c.ip)
	return nil
}

// ReadFrom lets bufio.Writer reach (*net.TCPConn).ReadFrom, so local files
// still go out by sendfile.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// SetWriteBuffer reaches (*net.TCPConn).SetWriteBuffer, which a lone large
// stream uses to size its socket buffer (core/server/bodystream).
func (c *conn) SetWriteBuffer(bytes int) error {
	if s, ok := c.Conn.(interface{ SetWriteBuffer(int) error }); ok {
		return s.SetWriteBuffer(bytes)
	}
	return nil
}

// SyscallConn reaches the socket, which the sendfile path corks while a
// body goes out (core/server/sendfile).
func (c *conn) SyscallConn() (syscall.RawConn, error) {
	if s, ok := c.Conn.(syscall.Conn); ok {
		return s.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}
