package mcptest

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// InMemory is an http.RoundTripper that hands each request to an
// mcp.Server's ServeMCP in-process: no socket, no HTTP parsing, and none
// of a front's checks (Host, Origin, authentication, body limits). A
// streamed answer is passed through an io.Pipe as it is written, so SSE
// streams and large bodies behave as over a connection.
type InMemory struct {
	srv *mcp.Server
	// Principal and Scopes are what every request is authenticated as
	// (none: the endpoint runs open).
	Principal string
	Scopes    []string
}

// NewInMemory returns a transport to srv.
func NewInMemory(srv *mcp.Server) *InMemory { return &InMemory{srv: srv} }

// As returns a copy of m whose requests are authenticated as principal
// with scopes.
func (m *InMemory) As(principal string, scopes ...string) *InMemory {
	return &InMemory{srv: m.srv, Principal: principal, Scopes: scopes}
}

// Client returns a client of version over m (endpoint
// http://in-memory/mcp). A 2025-11-25 client must Connect first.
func (m *InMemory) Client(version string) *Client {
	c := New("http://in-memory/mcp", version)
	c.HTTP = &http.Client{Transport: m,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c
}

// RoundTrip runs ServeMCP for req and returns once the answer's status
// and headers are set; its body follows as the server writes it.
func (m *InMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	body := req.Body
	if body == nil {
		body = http.NoBody
	}
	w := &pipeWriter{header: http.Header{}, ready: make(chan struct{}), req: req}
	r := &mcp.Request{Method: req.Method, Header: req.Header, Body: body, Principal: m.Principal,
		Scopes: m.Scopes, Context: req.Context()}
	w.pending.Add(1)
	go func() {
		defer w.pending.Done()
		m.srv.ServeMCP(r, w)
		w.answer(nil, 0)
	}()
	go func() { w.pending.Wait(); body.Close() }()
	select {
	case <-w.ready:
		return w.resp, nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// pipeWriter is the mcp.ResponseWriter of one in-memory exchange.
type pipeWriter struct {
	status  int
	header  http.Header
	req     *http.Request
	once    sync.Once
	ready   chan struct{} // closed once resp is set
	resp    *http.Response
	pending sync.WaitGroup // ServeMCP and a body's write func
}

func (w *pipeWriter) SetStatus(code int)           { w.status = code }
func (w *pipeWriter) SetHeader(name, value string) { w.header.Set(name, value) }

func (w *pipeWriter) SetBody(b []byte) {
	w.answer(&bytesBody{b: b}, int64(len(b)))
}

// SetBodyStream runs write on a goroutine of its own into a pipe the
// answer's body reads; the body ends with write's error, or
// io.ErrUnexpectedEOF when write stops short of a declared size.
func (w *pipeWriter) SetBodyStream(size int64, write func(mcp.StreamWriter) error) {
	pr, pw := io.Pipe()
	stop := context.AfterFunc(w.req.Context(), func() { pr.CloseWithError(w.req.Context().Err()) })
	w.pending.Add(1)
	go func() {
		defer w.pending.Done()
		defer stop()
		cw := &countingStream{w: pw}
		err := write(cw)
		if err == nil && size >= 0 && cw.n != size {
			err = io.ErrUnexpectedEOF
		}
		pw.CloseWithError(err)
	}()
	w.answer(pr, size)
}

// answer publishes the response (the first call wins; body nil: empty).
func (w *pipeWriter) answer(body io.ReadCloser, size int64) {
	w.once.Do(func() {
		if body == nil {
			body = http.NoBody
		}
		status := w.status
		if status == 0 {
			status = http.StatusOK
		}
		if size >= 0 {
			w.header.Set("Content-Length", strconv.FormatInt(size, 10))
		}
		w.resp = &http.Response{Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: w.header, Body: body,
			ContentLength: size, Request: w.req}
		close(w.ready)
	})
}

// countingStream is the StreamWriter over the pipe: Flush has nothing to
// push, each Write reaches the reader directly.
type countingStream struct {
	w *io.PipeWriter
	n int64
}

func (s *countingStream) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

func (s *countingStream) Flush() error { return nil }

// bytesBody is a complete body.
type bytesBody struct {
	b   []byte
	off int
}

func (b *bytesBody) Read(p []byte) (int, error) {
	if b.off >= len(b.b) {
		return 0, io.EOF
	}
	n := copy(p, b.b[b.off:])
	b.off += n
	return n, nil
}

func (b *bytesBody) Close() error { return nil }
