package front

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/admin"
	"github.com/mcpblob/mcpblob/core/server/connlimit"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/index"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// Defaults of [Options].
const (
	DefaultListen         = "127.0.0.1:8080"
	DefaultMaxBodyBytes   = 4 << 20
	DefaultMaxHeaderBytes = 16 << 10
	DefaultReadTimeout    = 30 * time.Second
	DefaultWriteTimeout   = 60 * time.Second
	DefaultIdleTimeout    = 120 * time.Second
	DefaultGracePeriod    = 30 * time.Second
	DefaultMaxConns       = 4096
)

// Options configure the HTTP front: the listener, the sizes and timeouts
// of requests and responses, connection caps, the Host and Origin rules,
// the access log and the admin listener. The zero value of every field is
// the documented default.
type Options struct {
	// Listen is the address ListenAndServe binds. Default "127.0.0.1:8080".
	// It also decides the security posture: loopback binds check Host and
	// may run without API keys (with a warning); other binds require keys.
	Listen string
	// AllowedOrigins lists extra acceptable Origin values
	// ("https://app.example.com"); localhost origins are always accepted on
	// loopback binds, same-origin requests on other binds.
	AllowedOrigins []string
	// AllowedHosts, when set, restricts the Host header on non-loopback
	// binds (hostnames, any port).
	AllowedHosts []string
	// MaxBodyBytes bounds an MCP message; larger bodies get 413 with a
	// JSON-RPC error. Default 4 MiB.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line plus headers (431 beyond).
	// Default 16 KiB.
	MaxHeaderBytes int
	// ReadTimeout bounds reading a request's headers (and fasthttp's
	// read-ahead of the first 8 KiB of its body); the rest of a body is read
	// under the rate rule (gate.Limits.BodyMinRate), which never lets a
	// client bank more than ReadTimeout of waiting. Default 30s.
	ReadTimeout time.Duration
	// WriteTimeout is a per-write deadline on responses: each chunk (and
	// each SSE event) must reach the client within it, however long the
	// whole response takes. Default 60s.
	WriteTimeout time.Duration
	// IdleTimeout bounds keep-alive waits between requests. Default 120s.
	IdleTimeout time.Duration
	// ShutdownDelay is how long Shutdown keeps serving after /readyz turns
	// 503, so load balancers stop sending new traffic. Default 0.
	ShutdownDelay time.Duration
	// GracePeriod bounds the wait for in-flight requests in Shutdown when
	// its context has no earlier deadline. Default 30s.
	GracePeriod time.Duration
	// MaxConns bounds the connections served at once; one more is
	// answered 503 (JSON, Retry-After) and closed. Default 4096.
	MaxConns int
	// MaxConnsPerIP bounds the connections from one client address (IPv4
	// or IPv6); one more is answered 429 with Retry-After and closed.
	// Default 0: no bound (behind a proxy every connection comes from the
	// proxy's address).
	MaxConnsPerIP int
	// AccessLog logs every request at info (request id, route, status,
	// bytes, duration, principal, MCP method and tool).
	AccessLog bool
	// Admin is the admin listener (/metrics, /debug/pprof/).
	Admin Admin
}

// Admin configures the admin listener (package admin).
type Admin struct {
	// Listen, when set, is the address of a second listener serving
	// /metrics and /debug/pprof/; the main listener then serves neither.
	// Without it an open loopback node serves /metrics.
	Listen string
	// Hosts are further Host names the admin listener answers (any port),
	// beside localhost and IP address literals; others get 403.
	Hosts []string
	// Token, when set, is the bearer every request to the admin listener
	// must carry (401 without it). Without it a non-loopback Listen is
	// logged at WARN at start.
	Token string
}

// Defaults fills in the defaults of o.
func (o *Options) Defaults() {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	o.MaxBodyBytes = positive(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.MaxHeaderBytes = positive(o.MaxHeaderBytes, DefaultMaxHeaderBytes)
	o.ReadTimeout = positive(o.ReadTimeout, DefaultReadTimeout)
	o.WriteTimeout = positive(o.WriteTimeout, DefaultWriteTimeout)
	o.IdleTimeout = positive(o.IdleTimeout, DefaultIdleTimeout)
	o.GracePeriod = positive(o.GracePeriod, DefaultGracePeriod)
	o.MaxConns = positive(o.MaxConns, DefaultMaxConns)
}

func positive[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// A Service serves the routes of the product behind the front (package
// blobsvc in mcpblob); the front knows it only through this interface.
type Service interface {
	// Owns reports whether path is one of the service's routes.
	Owns(path string) bool
	// Serve answers a request for one of its routes.
	Serve(ctx *fasthttp.RequestCtx)
	// Admit makes the checks Serve makes before it reads a body, for
	// Expect: 100-continue; on refusal it answers and reports false.
	Admit(ctx *fasthttp.RequestCtx) bool
}

// Env is what the front works with, built by the assembly (package
// server).
type Env struct {
	Logger    *slog.Logger
	Gate      *gate.Gate
	MCP       *mcp.Server
	Service   Service // nil: no routes beyond /mcp and the front's own
	Telemetry *telemetry.Tracker
	// Name is the server's name on the index page.
	Name string
	// DownloadURL and DownloadHost are the download origin (its host
	// name); DownloadHost "" when there is none.
	DownloadURL, DownloadHost string
	// Gateway, when set, serves /mcp (relayed to its upstream) and its
	// downloadUrls (gateway.go) in place of MCP.
	Gateway *gateway.Gateway
}

// Server is the HTTP front: it serves /mcp, the front's own routes
// (/, /healthz, /readyz, /metrics, the protected resource metadata) and
// hands the rest to its Service.
type Server struct {
	opts  Options
	log   *slog.Logger
	gate  *gate.Gate
	mcp   *mcp.Server
	svc   Service
	fs    *fasthttp.Server
	tel   *telemetry.Tracker
	env   Env
	ready atomic.Bool
	admin *admin.Server
	mu    sync.Mutex // guards admin
}

// New returns the front of opts (its defaults filled in) over env.
func New(opts Options, env Env) *Server {
	opts.Defaults()
	s := &Server{opts: opts, log: env.Logger, gate: env.Gate, mcp: env.MCP, svc: env.Service,
		tel: env.Telemetry, env: env}
	s.fs = s.newFastHTTP()
	s.countStreams()
	s.ready.Store(true)
	return s
}

// newFastHTTP configures the fasthttp server from s.opts.
func (s *Server) newFastHTTP() *fasthttp.Server {
	opts := s.opts
	return &fasthttp.Server{
		Handler:        s.handle,
		ErrorHandler:   s.errorHandler,
		ExpectHandler:  s.expectContinue, // expect.go
		Name:           "mcpblob",
		ReadBufferSize: opts.MaxHeaderBytes,
		// Room for a small response (headers and a 4 KiB blob as base64)
		// in one write: fasthttp's default of 4 KiB split it in two.
		WriteBufferSize:    16 << 10,
		MaxRequestBodySize: int(opts.MaxBodyBytes),
		ReadTimeout:        opts.ReadTimeout,
		IdleTimeout:        opts.IdleTimeout,
		// Serve's listener wrapper (connlimit) holds MaxConns and
		// MaxConnsPerIP and answers in JSON; fasthttp's own bound is only a
		// backstop, above it for connections still closing.
		Concurrency:                  2 * opts.MaxConns,
		DisablePreParseMultipartForm: true,
		StreamRequestBody:            true,
		// Write buffers and response body buffers go back to their pools
		// after each response instead of staying with an idle kept-alive
		// connection.
		ReduceMemoryUsage:    true,
		CloseOnShutdown:      true,
		NoDefaultContentType: true,
		// fasthttp would put the raw header buffer (API keys, tokens in
		// paths) into its parse errors, which reach the log at debug.
		SecureErrorLogMessage: true,
		Logger:                printfLogger{s.log},
	}
}

// CheckPosture refuses to serve addr, not a loopback address, without
// authentication.
func CheckPosture(g *gate.Gate, addr string, loopback bool) error {
	if !loopback && !g.Auth.Enabled() {
		return fmt.Errorf("server: refusing to serve %s without API keys or OAuth on a non-loopback address", addr)
	}
	return nil
}

// Serve serves on ln until Shutdown; it returns nil after a graceful
// shutdown. The listener's own address must satisfy the same posture as
// Options.Listen (loopback, or API keys configured).
func (s *Server) Serve(ln net.Listener) error {
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		if err := CheckPosture(s.gate, tcp.String(), tcp.IP.IsLoopback()); err != nil {
			return err
		}
	}
	if !s.gate.Auth.Enabled() {
		s.log.Warn("server: no API keys configured; the MCP endpoint is open to every local process", "addr", ln.Addr().String())
	}
	s.log.Info("server: serving", "addr", ln.Addr().String())
	if err := s.startAdmin(); err != nil {
		return err
	}
	// MaxConns always has a value (Defaults), so every connection is
	// counted here.
	return s.fs.Serve(connlimit.New(ln, s.opts.MaxConnsPerIP, s.opts.MaxConns))
}

// Shutdown stops the server gracefully: /readyz turns 503, the server keeps
// serving for ShutdownDelay, long-lived MCP streams are ended, then
// in-flight requests get until ctx's deadline (or GracePeriod) to finish.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	if d := s.opts.ShutdownDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.GracePeriod)
		defer cancel()
	}
	s.mcp.Close()
	if s.env.Gateway != nil {
		s.env.Gateway.Close() // its relayed GET streams, like core/mcp's
	}
	err := s.fs.ShutdownWithContext(ctx)
	if a := s.adminServer(); a != nil {
		_ = a.Close(ctx)
	}
	return err
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	path := requestPath(ctx)
	s.tel.BeginRequest(ctx, path)
	defer s.tel.EndRequest(ctx)
	// Every answer, whatever sets or resets it: no browser may sniff a type
	// (stored bytes above all; blobs.SafetyHeaders).
	defer ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	if refuseFraming(ctx) || s.misdirected(ctx, path) || s.routeGateway(ctx, path) { // framing.go, origin.go, gateway.go
		return
	}
	if path == "/mcp" {
		s.serveMCP(ctx) // mcp.go
		return
	}
	if s.svc != nil && s.svc.Owns(path) {
		s.svc.Serve(ctx)
		return
	}
	switch path {
	case "/":
		if !index.Serve(ctx, s.env.Name) {
			s.gate.DrainSmall(ctx)
			gate.MethodNotAllowed(ctx, "GET, HEAD")
		}
	case auth.MetadataPath, auth.MetadataPathMCP:
		s.serveResourceMetadata(ctx)
	case "/metrics":
		s.serveMetrics(ctx) // observe.go
	case "/healthz":
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("ok\n")
	case "/readyz":
		ctx.SetContentType("text/plain; charset=utf-8")
		if s.ready.Load() {
			ctx.SetBodyString("ready\n")
		} else {
			ctx.SetStatusCode(http.StatusServiceUnavailable)
			ctx.SetBodyString("shutting down\n")
		}
	default:
		gate.NotFound(ctx)
	}
}

// requestPath is the request's path; the MCP endpoint's, which nearly every
// request has, is a constant rather than a copy.
func requestPath(ctx *fasthttp.RequestCtx) string {
	if p := ctx.Path(); string(p) != "/mcp" {
		return string(p)
	}
	return "/mcp"
}

// serveResourceMetadata serves the RFC 9728 protected resource metadata at
// both well-known paths when OAuth is configured (404 otherwise: API keys
// need no discovery).
func (s *Server) serveResourceMetadata(ctx *fasthttp.RequestCtx) {
	if s.gate.Auth.OAuth == nil {
		gate.APIError(ctx, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		gate.MethodNotAllowed(ctx, "GET, HEAD")
		return
	}
	ctx.Response.Header.Set("Cache-Control", "public, max-age=300")
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	gate.WriteJSON(ctx, http.StatusOK, auth.NewResourceMetadata(s.gate.PublicURL, s.gate.Auth.Issuer))
}

// errorHandler answers a request fasthttp could not read. The header was
// not parsed (fasthttp resets it), so the path, and with it the surface,
// is unknown: the answer is the HTTP JSON error body
// {"error":{"code","message"}} that /v1, /d, /u and the transport errors of
// /mcp share (a JSON-RPC body is optional on an HTTP-level /mcp error).
// Only a body over the limit comes with a parsed header: /mcp gets its
// JSON-RPC error then. The messages name the problem, never the error.
func (s *Server) errorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr *net.OpError
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge) && string(ctx.Path()) == "/mcp":
		gate.JSONError(ctx, http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, "Request body too large")
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		gate.APIError(ctx, http.StatusRequestEntityTooLarge, "too_large", "request body too large")
	case errors.As(err, &small):
		gate.APIError(ctx, http.StatusRequestHeaderFieldsTooLarge, "header_too_large",
			fmt.Sprintf("request line and headers over the limit of %d bytes", s.opts.MaxHeaderBytes))
	case errors.As(err, &netErr) && netErr.Timeout():
		gate.APIError(ctx, http.StatusRequestTimeout, "timeout", "the request did not arrive in time")
	default:
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "malformed HTTP request")
	}
}

// printfLogger adapts slog to fasthttp's Printf logger (its lines pass the
// redacting handler like every other).
type printfLogger struct{ l *slog.Logger }

func (p printfLogger) Printf(format string, args ...any) {
	p.l.Debug("fasthttp: " + fmt.Sprintf(format, args...))
}

// Handler is the front's request handler, for a caller that runs its own
// fasthttp server or drives requests in memory (benchmarks).
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }
