package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// Limits against slow or many clients (docs/security.md "Limits"): a cap on
// connections (fasthttp's Concurrency and MaxConnsPerIP), a cap on uploads
// in progress (uploadSlots), and a minimum transfer rate for request
// bodies (paceReader). Buffers are taken when bytes arrive, not when a
// request starts (the scanner's, the multipart reader's, ingest's chunks),
// so a connection that trickles holds little memory while it lives, and
// the rate rule bounds how long that is.

// Defaults of the limits in [Options].
const (
	DefaultMaxConns               = 4096
	DefaultMaxUploads             = 128
	DefaultMaxUploadsPerPrincipal = 32
	DefaultBodyMinRate            = 4 << 10 // bytes per second
	DefaultBodyGrace              = 10 * time.Second
)

// retryAfter is the Retry-After, in seconds, of an upload refused for a
// limit.
const retryAfter = 2

// mcpUploadThreshold: a POST /mcp body longer than this, or of unknown
// length (chunked), is an upload and needs an upload slot; shorter ones
// hold at most this much and are bounded by the rate rule alone. It is the
// length beyond which the scanner diverts a string to storage or a spool.
const mcpUploadThreshold = 64 << 10

// limitDefaults fills in the defaults of the limits of opts.
func limitDefaults(opts *Options) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxUploads <= 0 {
		opts.MaxUploads = DefaultMaxUploads
	}
	if opts.MaxUploadsPerPrincipal <= 0 {
		opts.MaxUploadsPerPrincipal = DefaultMaxUploadsPerPrincipal
	}
	if opts.BodyMinRate == 0 {
		opts.BodyMinRate = DefaultBodyMinRate
	}
	if opts.BodyGrace <= 0 {
		opts.BodyGrace = DefaultBodyGrace
	}
}

// uploadSlots counts uploads in progress, in all and per principal.
type uploadSlots struct {
	max, perMax int
	mu          sync.Mutex
	n           int
	per         map[string]int
}

// acquire takes a slot for principal. It returns the release function, or
// the HTTP status of the refusal: 503 when every slot is taken, 429 when
// the principal's are.
func (u *uploadSlots) acquire(principal string) (release func(), status int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.n >= u.max:
		return nil, http.StatusServiceUnavailable
	case u.per[principal] >= u.perMax:
		return nil, http.StatusTooManyRequests
	}
	if u.per == nil {
		u.per = map[string]int{}
	}
	u.n++
	u.per[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.n--
			if u.per[principal]--; u.per[principal] == 0 {
				delete(u.per, principal)
			}
		})
	}, 0
}

// takeUploadSlot takes an upload slot for principal or answers the refusal
// (JSON-RPC shaped on /mcp, the control API's error elsewhere) with
// Retry-After, reading a small body or closing the connection.
func (s *Server) takeUploadSlot(ctx *fasthttp.RequestCtx, principal string, rpc bool) (release func(), ok bool) {
	release, status := s.uploads.acquire(principal)
	if release != nil {
		return release, true
	}
	code, msg := "busy", "too many uploads in progress; retry later"
	if status == http.StatusTooManyRequests {
		code, msg = "too_many_uploads", "too many uploads in progress for this principal; retry later"
	}
	if cl := ctx.Request.Header.ContentLength(); cl <= 0 || cl > mcpUploadThreshold {
		ctx.SetConnectionClose() // the body is not read
	} else {
		_, _ = io.CopyN(io.Discard, s.paced(ctx), int64(cl))
	}
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfter))
	if rpc {
		jsonError(ctx, status, mcp.CodeTransport, http.StatusText(status)+": "+msg)
	} else {
		apiError(ctx, status, code, msg)
	}
	return nil, false
}

// paceReader reads a request body under the minimum-rate rule. The client
// has a budget of time the server waits for its bytes: Grace at the start,
// plus 1/MinRate second for every byte that arrives, banked up to
// ReadTimeout. Only time spent waiting in Read is charged (the server's
// own pauses, such as a slow store, are not); each Read's deadline is the
// budget left, so a body that averages less than MinRate is cut off with a
// timeout soon after its budget is gone, while one that keeps the average
// may pause for as long as it has banked.
type paceReader struct {
	r       io.Reader
	conn    net.Conn
	perByte time.Duration // 1/MinRate; 0: no rate rule, only ReadTimeout per read
	bank    time.Duration // most budget that can be banked (ReadTimeout)
	budget  time.Duration
	expired bool // a Read timed out
	eof     bool // the body was read to its end
}

// bodyError is a failure reading a request body: the client went away,
// stalled or sent a malformed body. paceReader marks every body error so.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "server: request body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// requestBody returns the request body stream (bodies stream: the server
// runs with StreamRequestBody).
func (s *Server) requestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if bs := ctx.RequestBodyStream(); bs != nil {
		return bs
	}
	return bytes.NewReader(ctx.Request.Body())
}

// paced returns the request body stream under the rate rule.
func (s *Server) paced(ctx *fasthttp.RequestCtx) *paceReader {
	p := &paceReader{r: s.requestBody(ctx), conn: ctx.Conn(), bank: s.opts.ReadTimeout, budget: s.opts.BodyGrace}
	if s.opts.BodyMinRate > 0 {
		p.perByte = time.Second / time.Duration(s.opts.BodyMinRate)
		if p.perByte == 0 {
			p.perByte = 1 // over 1 GB/s: a nanosecond a byte
		}
	} else {
		p.budget = s.opts.ReadTimeout
	}
	return p
}

func (p *paceReader) Read(b []byte) (int, error) {
	if p.conn != nil {
		_ = p.conn.SetReadDeadline(time.Now().Add(max(p.budget, time.Millisecond)))
	}
	start := time.Now()
	n, err := p.r.Read(b)
	switch {
	case p.perByte == 0:
		p.budget = p.bank
	case p.budget < p.bank:
		p.budget = min(p.budget-time.Since(start)+time.Duration(n)*p.perByte, p.bank)
	default: // a grace longer than the bank: spend it first
		p.budget -= time.Since(start)
	}
	var ne net.Error
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		p.eof = true
		return n, err
	case errors.As(err, &ne) && ne.Timeout():
		p.expired = true
	}
	// The client's failure (gone, too slow, bad chunked framing), told
	// apart from storage's where both meet in one copy.
	return n, &bodyError{err}
}
