// Package connlimit bounds the connections from one client address: the
// next one is answered 429 with Retry-After and closed before the HTTP
// server sees it. (fasthttp's own MaxConnsPerIP is not used: its connection
// wrapper races with the idle-connection sweep of a graceful shutdown,
// hides the *net.TCPConn that sendfile needs, and counts IPv4 only.)
package connlimit

import (
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Listener is a net.Listener that bounds the connections from one client
// address (see the package documentation).
type Listener struct {
	net.Listener
	max int
	mu  sync.Mutex
	n   map[string]int
}

// RetryAfter is the Retry-After, in seconds, of a refused connection.
const RetryAfter = 1

// New returns ln limited to max connections per client address.
func New(ln net.Listener, max int) *Listener {
	return &Listener{Listener: ln, max: max, n: map[string]int{}}
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
		l.mu.Lock()
		ok := l.n[ip] < l.max
		if ok {
			l.n[ip]++
		}
		l.mu.Unlock()
		if ok {
			return &conn{Conn: c, l: l, ip: ip}, nil
		}
		refuseConn(c)
	}
}

// refuseConn answers 429 on a connection over its address's limit and
// closes it; the write is bounded, so a client that does not read cannot
// hold the accept loop.
func refuseConn(c net.Conn) {
	const body = `{"error":{"code":"too_many_connections","message":"too many connections from this address; retry later"}}`
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = io.WriteString(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: "+
		strconv.Itoa(RetryAfter)+"\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	_ = c.Close()
}

func (l *Listener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[ip]--; l.n[ip] <= 0 {
		delete(l.n, ip)
	}
}

// conn is a counted connection; Close gives its place back once.
type conn struct {
	net.Conn
	l    *Listener
	ip   string
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.ip) })
	return err
}

// ReadFrom lets bufio.Writer reach (*net.TCPConn).ReadFrom, so local files
// still go out by sendfile.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}
