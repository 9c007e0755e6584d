package mcphttp

import (
	"errors"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/hostorigin"
)

// Defaults of [Options].
const (
	DefaultBodyMinRate     = 4096 // bytes per second
	DefaultBodyGrace       = 10 * time.Second
	DefaultBodyReadTimeout = 30 * time.Second
	DefaultWriteTimeout    = 60 * time.Second
)

// Options configure the handler. The zero value of every field is the
// documented default.
type Options struct {
	// AllowedHosts lists the Host header values (names, any port) served.
	// Default: localhost, 127.0.0.1 and ::1 only, which suits a server
	// listening on a loopback address.
	AllowedHosts []string
	// AllowedOrigins lists extra acceptable Origin values
	// ("https://app.example.com"). Requests without Origin, and same-origin
	// ones, are always accepted; localhost origins are under the default
	// AllowedHosts.
	AllowedOrigins []string
	// Authenticate, when set, returns the caller of r. An error refuses
	// the request: an *mcp.Error is sent as it is (its status, headers,
	// a WWW-Authenticate challenge say), any other error as 401. Without
	// it every caller is anonymous (principal "").
	Authenticate func(r *http.Request) (principal string, scopes []string, err error)
	// MaxRequestBytes bounds a whole request body, file inputs included.
	// Default: the server's [mcp.Server.MaxRequestBytes].
	MaxRequestBytes int64
	// BodyMinRate is the average rate, in bytes per second, below which a
	// request body is cut off (408): after BodyGrace, each byte buys
	// 1/BodyMinRate second of waiting, banked up to BodyReadTimeout.
	// Default 4096; negative: no rate rule, BodyReadTimeout per read.
	BodyMinRate int64
	// BodyGrace is the waiting a body gets before its bytes have to pay
	// for it. Default 10s.
	BodyGrace time.Duration
	// BodyReadTimeout is the most waiting a body can bank. Default 30s.
	BodyReadTimeout time.Duration
	// WriteTimeout is a per-write deadline on responses. Default 60s.
	WriteTimeout time.Duration
}

func (o Options) withDefaults(srv *mcp.Server) Options {
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = srv.MaxRequestBytes()
	}
	if o.BodyMinRate == 0 {
		o.BodyMinRate = DefaultBodyMinRate
	}
	if o.BodyGrace <= 0 {
		o.BodyGrace = DefaultBodyGrace
	}
	if o.BodyReadTimeout <= 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	return o
}

// handler is the http.Handler NewHandler returns.
type handler struct {
	srv        *mcp.Server
	opts       Options
	hostOrigin hostorigin.Policy
}

// NewHandler returns the Streamable HTTP handler of srv. Mount it at the
// endpoint's path ("/mcp").
func NewHandler(srv *mcp.Server, opts Options) http.Handler {
	return &handler{srv: srv, opts: opts.withDefaults(srv), hostOrigin: policy(opts)}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// Also clears a deadline an earlier response left on the connection.
	_ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
	if why := h.checkHostOrigin(r); why != "" {
		writeJSONError(w, mcp.NewError(mcp.CodeTransport, "Forbidden: "+why, nil).WithStatus(http.StatusForbidden))
		return
	}
	if r.ContentLength > h.opts.MaxRequestBytes {
		w.Header().Set("Connection", "close")
		writeJSONError(w, tooLarge())
		return
	}
	req := &mcp.Request{Method: r.Method, Header: r.Header, Context: r.Context()}
	if h.opts.Authenticate != nil {
		var err error
		if req.Principal, req.Scopes, err = h.opts.Authenticate(r); err != nil {
			writeJSONError(w, authError(err))
			return
		}
	}
	var body *pacedBody
	if r.Body != nil && r.Body != http.NoBody {
		body = newPacedBody(r.Body, rc, h.opts)
		req.Body = body
	}
	resp := &response{w: w, rc: rc, writeTimeout: h.opts.WriteTimeout}
	h.srv.ServeMCP(req, resp)
	if e := body.failure(); e != nil {
		resp.refuse(e) // the answer to a body cut short is the cut
	}
	resp.commit()
}

func tooLarge() *mcp.Error {
	return mcp.NewError(mcp.CodeInvalidRequest, "Request body too large", nil).WithStatus(http.StatusRequestEntityTooLarge)
}

// authError is the answer to a failed Authenticate.
func authError(err error) *mcp.Error {
	var e *mcp.Error
	if errors.As(err, &e) {
		return e
	}
	return mcp.NewError(mcp.CodeTransport, "Unauthorized", nil).WithStatus(http.StatusUnauthorized)
}

// writeJSONError sends e as a whole JSON-RPC error response (no id).
func writeJSONError(w http.ResponseWriter, e *mcp.Error) {
	for k, v := range e.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.HTTPStatus())
	_, _ = w.Write(mcp.ErrorBody(e.Code, e.Message))
}
