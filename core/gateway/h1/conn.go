package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one connection to the upstream, used by one request at a time.
type conn struct {
	t    *Transport
	key  string
	nc   net.Conn // raw, or TLS over it
	raw  net.Conn
	peek *peeker // looks at raw while idle
	// plain: nc is raw and peek reaches its socket, so the last write of a
	// request is joined to the wait for its answer and answers are read
	// with raw reads (sockWriter, sockReader).
	plain  bool
	lim    limited
	br     *bufio.Reader
	bw     *bufio.Writer // writes to sw
	sw     sockWriter
	head   []byte // readHead's scratch
	uriOf  *url.URL
	uri    string // uriOf's request target (requestURI)
	idleAt time.Time
	hdl    time.Time // the read deadline the header wait set, zero none (c.dl)
	sent   bool      // the request in flight went out whole (a body in memory)
	// The wait for the response headers is timed from the end of the
	// request body: the writer starts it, unless the headers came first.
	dl       sync.Mutex
	awaiting bool // the response headers are being read
	bodyDone bool // the request body went out whole (or there is none to stream)
}

// limited is the connection as the reader sees it: reads bounded while
// response headers are read (left >= 0), and counted.
type limited struct {
	r    io.Reader
	left int64 // -1: no bound
	read int64 // bytes read for the request in flight
	err  error // the joined wait's error (sockWriter), for the next read
}

func (l *limited) Read(p []byte) (int, error) {
	if err := l.err; err != nil {
		l.err = nil
		return 0, err
	}
	if l.left == 0 {
		return 0, ErrHeadersTooLarge
	}
	if l.left > 0 && int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	if l.left > 0 {
		l.left -= int64(n)
	}
	return n, err
}

// roundTrip sends req on c and reads the response headers; on failure c is
// closed.
func (c *conn) roundTrip(req *http.Request) (*http.Response, error) {
	c.sent, c.bodyDone = false, false // the last request's writer has ended
	stop := notWatched
	if req.Context().Done() != nil { // a context that can end closes c
		stop = context.AfterFunc(req.Context(), func() { _ = c.nc.Close() })
	}
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = c.nc.Close()
		return nil, err
	}
	if err := c.writeHead(req); err != nil {
		closeBody(req)
		return fail(err)
	}
	var w *bodyWriter
	switch {
	case req.Body != nil && req.GetBody == nil: // streamed
		w = c.startBody(req)
		c.awaitHeaders(false)
	case req.Body != nil:
		_, err := c.copyBody(req.Body, req.ContentLength)
		closeBody(req)
		if err != nil {
			return fail(err)
		}
		fallthrough
	default:
		c.awaitHeaders(true)
		c.sw.join = c.plain // the wait joined to the last write
		err := c.bw.Flush()
		c.sw.join = false
		if err != nil {
			return fail(err)
		}
		c.sent = true
	}
	resp, err := c.readResponse(req)
	if err != nil {
		if werr := w.bodyErr(); werr != nil {
			err = werr // the request body failed (and closed c): that is the story
		}
		return fail(err)
	}
	b := &body{c: c, rc: resp.Body, stop: stop, w: w, ctx: req.Context(), keep: !resp.Close,
		chunked: len(resp.TransferEncoding) > 0, size: resp.ContentLength}
	resp.Body = b
	if b.rc == http.NoBody {
		b.finish(true)
	}
	return resp, nil
}

// notWatched is the stop of a request whose context cannot end: nothing
// to stop, and nothing ran.
func notWatched() bool { return true }

// writeHead buffers the request line and headers.
func (c *conn) writeHead(req *http.Request) error {
	bw := c.bw
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	_, _ = bw.WriteString(req.Method)
	_ = bw.WriteByte(' ')
	_, _ = bw.WriteString(c.requestURI(req.URL))
	_, _ = bw.WriteString(" HTTP/1.1\r\nHost: ")
	_, _ = bw.WriteString(host)
	_, _ = bw.WriteString("\r\n")
	for name, values := range req.Header {
		switch name {
		case "Host", "Content-Length", "Transfer-Encoding":
			continue
		}
		if !validName(name) {
			return errors.New("h1: invalid header name " + strconv.Quote(name))
		}
		for _, v := range values {
			if !safeValue(v) {
				return errors.New("h1: invalid value of header " + name)
			}
			_, _ = bw.WriteString(name)
			_, _ = bw.WriteString(": ")
			_, _ = bw.WriteString(v)
			_, _ = bw.WriteString("\r\n")
		}
	}
	switch {
	case req.Body == nil && (req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch):
		_, _ = bw.WriteString("Content-Length: 0\r\n")
	case req.Body != nil && req.ContentLength >= 0:
		_, _ = bw.WriteString("Content-Length: ")
		_, _ = bw.Write(strconv.AppendInt(bw.AvailableBuffer(), req.ContentLength, 10))
		_, _ = bw.WriteString("\r\n")
	case req.Body != nil:
		_, _ = bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	_, err := bw.WriteString("\r\n")
	return err
}

// requestURI is u's request target, kept for the next request to the
// same URL (every request of a gateway goes to its one upstream URL; a
// URL is not changed once a request was sent to it).
func (c *conn) requestURI(u *url.URL) string {
	if u != c.uriOf {
		c.uriOf, c.uri = u, u.RequestURI()
	}
	return c.uri
}

// safeValue reports whether a header value can go out as it is: no line
// end or NUL that would split or cut the head.
func safeValue(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\r', '\n', 0:
			return false
		}
	}
	return true
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b <= ' ' || b >= 0x7f || b == ':' {
			return false
		}
	}
	return true
}

// copyBuffers are the buffers request bodies are read through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody writes body to c's buffer: n bytes exactly, or chunked (each
// chunk flushed) when n < 0. fromBody reports an error of body's rather
// than of the connection's.
func (c *conn) copyBody(body io.Reader, n int64) (fromBody bool, err error) {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for sent := int64(0); n < 0 || sent < n; {
		p := buf
		if n >= 0 && int64(len(p)) > n-sent {
			p = p[:n-sent]
		}
		k, rerr := body.Read(p)
		if k > 0 {
			if err := c.writeChunk(p[:k], n < 0); err != nil {
				return false, err
			}
			sent += int64(k)
		}
		switch {
		case errors.Is(rerr, io.EOF) && n < 0:
			_, err := c.bw.WriteString("0\r\n\r\n")
			return false, err
		case errors.Is(rerr, io.EOF) && sent < n:
			return true, io.ErrUnexpectedEOF
		case rerr != nil && !errors.Is(rerr, io.EOF):
			return true, rerr
		}
	}
	return false, nil
}

// writeChunk writes p, framed and flushed when chunked.
func (c *conn) writeChunk(p []byte, chunked bool) error {
	if !chunked {
		_, err := c.bw.Write(p)
		return err
	}
	var size [20]byte
	_, _ = c.bw.Write(strconv.AppendInt(size[:0], int64(len(p)), 16))
	_, _ = c.bw.WriteString("\r\n")
	_, _ = c.bw.Write(p)
	_, _ = c.bw.WriteString("\r\n")
	return c.bw.Flush()
}

// bodyWriter is a streamed request body being sent on a goroutine of its
// own.
type bodyWriter struct {
	done     chan struct{}
	err      error
	fromBody bool
}

// startBody sends req's headers and then its body as it comes.
func (c *conn) startBody(req *http.Request) *bodyWriter {
	w := &bodyWriter{done: make(chan struct{})}
	go func() {
		var err error
		fromBody := false
		if err = c.bw.Flush(); err == nil { // the headers go at once
			if fromBody, err = c.copyBody(req.Body, req.ContentLength); err == nil {
				err = c.bw.Flush()
			}
		}
		closeBody(req)
		c.bodySent(err == nil) // before done: once done, c may serve another request
		w.err, w.fromBody = err, fromBody
		close(w.done)
		if fromBody {
			_ = c.nc.Close() // the upstream waits for the rest: end the request
		}
	}()
	return w
}

// bodyErr is the error of a request body that failed to be read, once the
// writer has ended; nil otherwise.
func (w *bodyWriter) bodyErr() error {
	if w == nil {
		return nil
	}
	select {
	case <-w.done:
		if w.fromBody {
			return w.err
		}
	default:
	}
	return nil
}

// sockWriter is what a connection's buffered writer writes to: the
// connection, or (join, on a plain socket) the socket itself with the wait
// for the answer joined to the write (peeker.sendAwaiting), for a request
// that goes out whole from the buffer.
type sockWriter struct {
	c    *conn
	join bool
}

func (w *sockWriter) Write(b []byte) (int, error) {
	if !w.join {
		return w.c.nc.Write(b)
	}
	w.join = false // one write only: the last of the request
	c := w.c
	n, werr, waitErr := c.peek.sendAwaiting(b)
	switch {
	case werr != nil:
		return n, c.opError("write", os.NewSyscallError("write", werr))
	case n < len(b): // the socket took part: the rest as any write, the read as any read
		k, err := c.nc.Write(b[n:])
		return n + k, err
	case waitErr != nil: // the request went out whole; the answer's read sees the wait's end
		c.lim.err = c.opError("read", waitErr)
	}
	return n, nil
}

// sockReader is what a plain socket's connection reads from: the socket
// through peeker.read (a raw system call), with net.Conn's errors.
type sockReader struct{ c *conn }

func (r sockReader) Read(b []byte) (int, error) {
	n, err := r.c.peek.read(b)
	if err != nil && err != io.EOF {
		err = r.c.opError("read", err)
	}
	return n, err
}

// opError is err of op on the socket, as net.Conn's methods report it.
func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.raw.LocalAddr(), Addr: c.raw.RemoteAddr(), Err: err}
}

// awaitHeaders starts the wait for the response headers: at once for a
// request sent whole from memory (before its last write, which may wait
// for the answer: sockWriter), else when the streamed body's writer ends
// (bodySent).
func (c *conn) awaitHeaders(whole bool) {
	c.dl.Lock()
	defer c.dl.Unlock()
	c.awaiting = true
	if whole {
		c.bodyDone = true
	}
	switch {
	case c.bodyDone:
		c.startHeaderWait()
	case !c.hdl.IsZero():
		c.endHeaderWait() // an earlier request's: the wait starts at the body's end
	}
}

// readResponse reads the response headers, within HeaderTimeout (timed by
// awaitHeaders) and MaxHeaderBytes; informational (1xx) responses are
// skipped.
func (c *conn) readResponse(req *http.Request) (*http.Response, error) {
	c.lim.left = c.t.o.MaxHeaderBytes
	for {
		resp, head, err := readHead(c.br, req, c.head)
		c.head = head[:0]
		if err == nil && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		if err == nil {
			err = frame(resp, c.br)
		}
		c.lim.left = -1
		c.dl.Lock()
		c.awaiting, c.bodyDone = false, false
		if err == nil && !c.hdl.IsZero() && !c.holdsBody(resp) {
			c.endHeaderWait() // the body reads from the socket: unbounded
		}
		c.dl.Unlock()
		return resp, err
	}
}

// holdsBody reports whether resp's whole body is in c's buffer already
// (or it has none): reading it takes nothing more from the socket, so a
// read deadline left there cannot cut it.
func (c *conn) holdsBody(resp *http.Response) bool {
	if resp.Body == http.NoBody {
		return true
	}
	buf, _ := c.br.Peek(c.br.Buffered())
	return bodyIn(buf, len(resp.TransferEncoding) > 0, resp.ContentLength)
}

// bodyIn reports whether buf holds a whole body: chunks up to the last one
// (and no trailer), or size bytes (>= 0; -1: it ends with the connection).
func bodyIn(buf []byte, chunked bool, size int64) bool {
	switch {
	case chunked:
		return chunksEnd(buf)
	case size >= 0:
		return int64(len(buf)) >= size
	}
	return false
}

// bodySent records the end of a streamed request body: the wait for the
// response headers starts there when they are awaited (and whole: sent).
func (c *conn) bodySent(whole bool) {
	c.dl.Lock()
	defer c.dl.Unlock()
	c.bodyDone = whole
	if whole && c.awaiting {
		c.startHeaderWait()
	}
}

// startHeaderWait bounds the wait for the response headers by
// HeaderTimeout (c.dl held): a read deadline at least HeaderTimeout away,
// and at most its slack (headerSlack) further. A deadline an earlier
// request left that is still far enough serves as it is: a connection
// reused for answers its buffer holds whole (readResponse leaves the
// deadline then) sets one only once per slack, not two per request.
func (c *conn) startHeaderWait() {
	d := c.t.o.HeaderTimeout
	if d <= 0 {
		return
	}
	now := time.Now()
	if !c.hdl.IsZero() && c.hdl.Sub(now) >= d {
		return
	}
	c.hdl = now.Add(d + headerSlack(d))
	_ = c.nc.SetReadDeadline(c.hdl)
}

// headerSlack is how much longer than HeaderTimeout a header wait may be
// let run: an eighth of it, at most a second.
func headerSlack(d time.Duration) time.Duration { return min(d/8, time.Second) }

// endHeaderWait removes the header wait's read deadline.
func (c *conn) endHeaderWait() {
	c.hdl = time.Time{}
	_ = c.nc.SetReadDeadline(time.Time{})
}

// body is a response body read from its connection; the connection goes
// back to the pool at its end, or is closed.
type body struct {
	c    *conn
	rc   io.ReadCloser
	stop func() bool
	w    *bodyWriter
	ctx  context.Context
	keep bool
	done atomic.Int32 // 0 reading, 1 read to its end, 2 closed or failed
	// What InBuffer needs: the framing, and whether a read happened.
	chunked bool
	size    int64 // the declared length, -1 none
	started bool
}

// InBuffer reports whether the whole body is in the connection's buffer
// already, so that reading it to its end cannot wait on the network: a
// declared length that is all there, or chunks up to the last one (and no
// trailer). It is false once the body was read from, and must not be
// called during a Read.
func (b *body) InBuffer() bool {
	switch b.done.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	if b.started {
		return false
	}
	buf, _ := b.c.br.Peek(b.c.br.Buffered())
	return bodyIn(buf, b.chunked, b.size)
}

// WaitEnd waits up to d for the whole body to be in the connection's
// buffer (InBuffer) and reports whether it came; it reads nothing past
// what the buffer holds, and the body then reads as it would have. Before
// the body's first read only, and not over TLS (false at once).
func (b *body) WaitEnd(d time.Duration) bool {
	if b.InBuffer() {
		return true
	}
	c := b.c
	if b.done.Load() != 0 || b.started || c.nc != c.raw {
		return false
	}
	c.dl.Lock()
	c.hdl = time.Time{} // WaitEnd's own deadline replaces the header wait's, and goes
	c.dl.Unlock()
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = c.nc.SetReadDeadline(time.Time{}) }()
	for {
		n := c.br.Buffered()
		if n >= c.br.Size() {
			return false
		}
		if _, err := c.br.Peek(n + 1); err != nil {
			return false // the wait ended (bufio keeps no error: the body's next read sees the connection as it is)
		}
		if b.InBuffer() {
			return true
		}
	}
}

// chunksEnd reports whether p holds whole chunks up to the last one (size
// 0, no trailer). Anything it does not read plainly is false.
func chunksEnd(p []byte) bool {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 1 || p[i-1] != '\r' {
			return false
		}
		line := p[:i-1]
		if j := bytes.IndexByte(line, ';'); j >= 0 { // a chunk extension
			line = line[:j]
		}
		n, ok := hexSize(bytes.TrimRight(line, " \t"))
		if !ok {
			return false
		}
		p = p[i+1:]
		if n == 0 {
			return len(p) >= 2 && p[0] == '\r' && p[1] == '\n'
		}
		if int64(len(p)) < n+2 || p[n] != '\r' || p[n+1] != '\n' {
			return false
		}
		p = p[n+2:]
	}
}

// hexSize parses a chunk size (at most 15 hex digits).
func hexSize(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

var errClosed = errors.New("h1: read on closed response body")

func (b *body) Read(p []byte) (int, error) {
	b.started = true
	switch b.done.Load() {
	case 1:
		return 0, io.EOF
	case 2:
		return 0, errClosed
	}
	n, err := b.rc.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.finish(true)
		return n, io.EOF
	case err != nil:
		b.finish(false)
		return n, ctxErr(b.ctx, err)
	}
	return n, nil
}

// Close ends the response; before its end, the connection is closed.
func (b *body) Close() error {
	b.finish(false)
	return nil
}

// finish ends the body once: the connection goes back to the pool when
// the body was read whole, the request sent whole and the context not
// ended; else it is closed.
func (b *body) finish(whole bool) {
	state := int32(2)
	if whole {
		state = 1
	}
	if !b.done.CompareAndSwap(0, state) {
		return
	}
	switch {
	case !b.stop() || !whole || !b.keep:
		_ = b.c.nc.Close()
	case b.w == nil:
		b.c.t.put(b.c)
	default:
		b.c.putAfter(b.w) // the writer may still be ending: its last flush went out
	}
}

// putAfter puts c back in the pool once its request body's writer ended
// having sent it whole; a writer that fails, or is still at it after a
// second (an upstream that answered a keep-alive response without reading
// the whole body), has c closed.
func (c *conn) putAfter(w *bodyWriter) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-w.done:
		if w.err == nil {
			c.t.put(c)
			return
		}
	case <-t.C:
	}
	_ = c.nc.Close()
}
