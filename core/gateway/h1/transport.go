package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Options configure a [Transport]; the zero value of each is its default.
type Options struct {
	// DialTimeout bounds connecting (and a TLS handshake). Default 10s.
	DialTimeout time.Duration
	// HeaderTimeout bounds the wait for the response headers once the
	// request is sent (give or take an eighth of it, at most a second:
	// startHeaderWait); 0: none.
	HeaderTimeout time.Duration
	// MaxHeaderBytes bounds the response headers. Default 64 KiB.
	MaxHeaderBytes int64
	// MaxIdle bounds the idle connections kept per host. Default 256.
	MaxIdle int
	// IdleTimeout is how long an idle connection is kept. Default 90s.
	IdleTimeout time.Duration
	// TLS configures https connections (nil: the system roots, the URL's
	// host name).
	TLS *tls.Config
	// Dial, when set, connects in place of a net.Dialer (tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// bufSize is the size of each connection's read and write buffers.
const bufSize = 64 << 10

// ErrHeadersTooLarge is the error of response headers over MaxHeaderBytes.
var ErrHeadersTooLarge = errors.New("h1: the upstream's response headers exceeded the limit")

// Transport is an HTTP/1.1 client (package doc). Safe for concurrent use.
type Transport struct {
	o    Options
	mu   sync.Mutex
	idle map[string][]*conn // by scheme and host, the last idle last
}

// New returns the Transport of o.
func New(o Options) *Transport {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = 256
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	return &Transport{o: o, idle: map[string][]*conn{}}
}

// RoundTrip sends req and returns the response, its body streaming from
// the connection. A redirect is returned as it is.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		closeBody(req)
		return nil, errors.New("h1: unsupported scheme " + req.URL.Scheme)
	}
	for try := 0; ; try++ {
		c, reused, err := t.conn(ctx, req.URL)
		if err != nil {
			closeBody(req)
			return nil, ctxErr(ctx, err)
		}
		resp, err := c.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		if try == 0 && reused && c.lim.read == 0 && ctx.Err() == nil && replayable(req, c.sent) {
			// A kept-alive connection the upstream closed as it was
			// reused: once more on a fresh one.
			if req, err = again(req); err == nil {
				continue
			}
		}
		return nil, ctxErr(ctx, err)
	}
}

// replayable reports whether req may go again on a fresh connection after
// a kept-alive one failed before any byte of an answer (as net/http's
// Transport judges): its body can be had again (none, or GetBody), and it
// did not go out whole (the upstream cannot have acted on it) or its
// method is idempotent.
func replayable(req *http.Request, sent bool) bool {
	if req.Body != nil && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return !sent
}

// again is req with its body anew, for a retry.
func again(req *http.Request) (*http.Request, error) {
	if req.GetBody == nil {
		r := *req
		return &r, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// ctxErr is err, or the context's error once it ended (the connection was
// closed for it).
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// CloseIdle closes the idle connections.
func (t *Transport) CloseIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*conn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			_ = c.nc.Close()
		}
	}
}

// conn returns an idle connection to u's host that is still open, or a
// new one.
func (t *Transport) conn(ctx context.Context, u *url.URL) (c *conn, reused bool, err error) {
	key := u.Scheme + "://" + u.Host
	now := time.Now()
	for {
		t.mu.Lock()
		cs := t.idle[key]
		if len(cs) == 0 {
			t.mu.Unlock()
			break
		}
		c = cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		t.mu.Unlock()
		// Peeked at every time, however briefly it was idle: a POST sent on
		// a connection the upstream closed right after its answer, without
		// saying so, would fail the client's request (a POST that went out
		// whole is not sent twice).
		if !c.hdl.IsZero() && !now.Before(c.hdl) {
			c.endHeaderWait() // an earlier request's, passed while idle: the peek would fail on it
		}
		if now.Sub(c.idleAt) < t.o.IdleTimeout && c.peek.alive() {
			return c, true, nil
		}
		_ = c.nc.Close()
	}
	c, err = t.dial(ctx, u, key)
	return c, false, err
}

// put keeps c for the next request to its host, or closes it.
func (t *Transport) put(c *conn) {
	c.idleAt = time.Now()
	c.lim.read = 0
	t.mu.Lock()
	if cs := t.idle[c.key]; len(cs) < t.o.MaxIdle {
		t.idle[c.key] = append(cs, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	_ = c.nc.Close()
}

// dial connects to u's host (port 80 or 443 unless it names one).
func (t *Transport) dial(ctx context.Context, u *url.URL, key string) (*conn, error) {
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	raw, err := t.o.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	nc := raw
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if t.o.TLS != nil {
			cfg = t.o.TLS.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(raw, cfg)
		hctx, cancel := context.WithTimeout(ctx, t.o.DialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = raw.Close()
			return nil, err
		}
		nc = tc
	}
	c := &conn{t: t, key: key, nc: nc, raw: raw, peek: newPeeker(raw)}
	c.plain = nc == raw && c.peek.canJoin()
	c.lim = limited{r: nc, left: -1}
	if c.plain {
		c.lim.r = sockReader{c}
	}
	c.br = bufio.NewReaderSize(&c.lim, bufSize)
	c.sw = sockWriter{c: c}
	c.bw = bufio.NewWriterSize(&c.sw, bufSize)
	return c, nil
}
