package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/metrics"
	"github.com/mcpblob/mcpblob/core/server/admin"
	"github.com/mcpblob/mcpblob/core/server/bodystream"
	"github.com/mcpblob/mcpblob/core/server/connlimit"
	"github.com/mcpblob/mcpblob/core/server/index"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/server/redact"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
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
)

// Options configure a [Server]. The zero value of every field is the
// documented default; only Backend is required.
type Options struct {
	// Backend is the blob store. Required. The server does not close it.
	Backend storage.Backend
	// Keyring signs session ids, MRTR requestState and (later) links.
	// nil: a random per-process keyring, fine for one node; a cluster
	// needs the same keys on every node.
	Keyring *token.Keyring
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Listen is the address ListenAndServe binds. Default "127.0.0.1:8080".
	// It also decides the security posture: loopback binds check Host and
	// may run without API keys (with a warning); other binds require keys.
	Listen string
	// AuthKeysFile names a file of accepted API keys, stored hashed: one
	// lower-case hex SHA-256 of a key per line, optionally followed by a
	// principal name and "scopes=read,write,admin" (default read,write);
	// blank lines and '#' comments are ignored (auth.Keys). Clients send
	// "Authorization: Bearer <key>".
	AuthKeysFile string
	// AuthKeys adds hex SHA-256 key digests (same syntax as the file lines).
	AuthKeys []string
	// OAuth, when set, verifies OAuth 2.1 access tokens (package
	// core/auth/oauth): the server is then a protected resource whose
	// metadata names OAuthIssuer (docs/auth.md).
	OAuth auth.TokenVerifier
	// OAuthIssuer is the authorization server's issuer URL, for the
	// protected resource metadata.
	OAuthIssuer string
	// OAuthLogin, with OAuth, lets the upload page sign its user in at the
	// authorization server (login.go); nil: URL-mode upload pages answer
	// that sign-in is not configured.
	OAuthLogin *LoginConfig
	// Tenancy is "principal" (a namespace per principal; the default when
	// API keys or OAuth are configured) or "shared" (one namespace for
	// every caller; the default of an open loopback endpoint).
	Tenancy string
	// LinksNeedCredential makes download links also require the minting
	// principal's credential (SEP-2532: fetched with the MCP session's
	// authorization); default false: a link is its own capability.
	LinksNeedCredential bool
	// PublicURL is the base of every URL the server mints (download links,
	// upload endpoints, the upload page), as clients reach it: behind a load
	// balancer, its address. Default "http://" + Listen.
	PublicURL string
	// DownloadURL, when set, is the base of download links (/d/{token}) on
	// an origin of their own: the user-content-domain pattern. Its host
	// must differ from PublicURL's (better: another registrable domain,
	// so no cookie of the service's site reaches it). Requests for that
	// host are served /d, /healthz and /readyz only; /d on any other host
	// is refused (404), so stored bytes never come from the service's
	// origin. The load balancer must pass the Host header through.
	// Default "": links on PublicURL, /d served on every host.
	DownloadURL string
	// AllowedOrigins lists extra acceptable Origin values
	// ("https://app.example.com"); localhost origins are always accepted on
	// loopback binds, same-origin requests on other binds.
	AllowedOrigins []string
	// AllowedHosts, when set, restricts the Host header on non-loopback
	// binds (hostnames, any port).
	AllowedHosts []string
	// Extend registers further tools, resources and prompts on the MCP
	// endpoint after the blob application's (cmd adds the conformance
	// fixtures this way; a Go program its own tools).
	Extend func(*mcp.Server)
	// Name and Version form serverInfo. Defaults "mcpblob", "dev".
	Name, Version string
	// Instructions is the optional MCP instructions text.
	Instructions string
	// MaxBodyBytes bounds an MCP message; larger bodies get 413 with a
	// JSON-RPC error. Default 4 MiB.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line plus headers (431 beyond).
	// Default 16 KiB.
	MaxHeaderBytes int
	// ReadTimeout bounds reading a request's headers (and fasthttp's
	// read-ahead of the first 8 KiB of its body); the rest of a body is read
	// under the rate rule (BodyMinRate), which never lets a client bank more
	// than ReadTimeout of waiting. Default 30s.
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
	// Metrics receives the server's metrics; nil: a set of its own.
	Metrics *metrics.Set
	// AccessLog logs every request at info (request id, route, status,
	// bytes, duration, principal, MCP method and tool).
	AccessLog bool
	// AdminListen, when set, is the address of a second listener serving
	// /metrics and /debug/pprof/ (package admin); the main listener then
	// serves neither. Without it an open loopback node serves /metrics.
	AdminListen string
	// AdminHosts are further Host names the admin listener answers (any
	// port), beside localhost and IP address literals; others get 403.
	AdminHosts []string
	// AdminToken, when set, is the bearer every request to the admin
	// listener must carry (401 without it). Without it a non-loopback
	// AdminListen is logged at WARN at start.
	AdminToken string
	// MaxUploadBytes bounds a control-API PUT body and the maxSize of
	// minted upload endpoints. Default 5 GiB.
	MaxUploadBytes int64
	// MaxConns bounds the connections served at once; one more is
	// answered 503 (JSON, Retry-After) and closed. Default 4096.
	MaxConns int
	// MaxConnsPerIP bounds the connections from one client address (IPv4
	// or IPv6); one more is answered 429 with Retry-After and closed.
	// Default 0: no bound (behind a proxy every connection comes from the
	// proxy's address).
	MaxConnsPerIP int
	// MaxUploads bounds the uploads in progress: PUT /v1/blobs/{key},
	// POST|PUT /u/{token}, and POST /mcp bodies over 64 KiB or of unknown
	// length. One more is answered 503 with Retry-After. Default 128.
	MaxUploads int
	// MaxUploadsPerPrincipal bounds the uploads in progress of one
	// principal (API key, OAuth subject, or the principal an upload link
	// was minted for); one more is answered 429 with Retry-After. Default 32.
	MaxUploadsPerPrincipal int
	// BodyMinRate is the average rate, in bytes per second, below which a
	// request body is cut off (408): after BodyGrace of slow start, each
	// byte buys 1/BodyMinRate second of waiting, banked up to ReadTimeout.
	// Default 4096 (4 KiB/s); negative: no rate rule, only ReadTimeout per
	// read.
	BodyMinRate int64
	// BodyGrace is the waiting a body gets before its bytes have to pay for
	// it (the slow start of the rate rule). Default 10s.
	BodyGrace time.Duration
	// DownloadRedirect makes /d/{token} answer 302 to a presigned URL when
	// the backend presigns (S3); default false: /d streams the bytes itself.
	DownloadRedirect bool
	// MCP carries further core/mcp tuning (page size, text size rule, TTLs);
	// the fields above override its Keyring, Logger, Name, Version,
	// Instructions and MaxBodyBytes; Authorize and LiveSessions are the server's.
	MCP mcp.Options
	// Blobs carries further tuning of the blob application (stream mode,
	// text size rule, page size, link lifetime, upload accept list); the
	// fields above override its Backend, Keyring, Logger and PublicURL.
	Blobs blobs.Options
}

// Server serves the MCP endpoint and the operations endpoints.
type Server struct {
	opts     Options
	log      *slog.Logger
	mcp      *mcp.Server
	blobs    *blobs.App
	fs       *fasthttp.Server
	auth     *auth.Authenticator
	tenancy  tenancy.Policy
	loopback bool
	dlHost   string // DownloadURL's host name, "" without a download origin
	ready    atomic.Bool
	facts    *onetime.Facts // one-time facts: links redeemed, upload ids taken, sessions ended
	tel      *telemetry.Tracker
	admin    *admin.Server
	uploads  uploadSlots // uploads in progress (limits.go)
	mu       sync.Mutex
	serving  bool
}

// New validates opts and returns a Server. A non-loopback Listen address
// without any API key is refused.
func New(opts Options) (*Server, error) {
	if opts.Backend == nil {
		return nil, errors.New("server: Options.Backend is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Every line the server, core/mcp and the blob application log is
	// redacted (redact.go): no key, token, presigned query or data URI
	// payload reaches the log, whatever path it took.
	opts.Logger = slog.New(redact.NewHandler(opts.Logger.Handler()))
	if opts.Keyring == nil {
		opts.Keyring = token.NewRandomKeyring() // shared by core/mcp, /d and /u
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	dlHost, err := resolveURLs(&opts) // origin.go
	if err != nil {
		return nil, err
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = DefaultGracePeriod
	}
	limitDefaults(&opts)
	tel := setUpTelemetry(&opts) // observe.go
	s := &Server{opts: opts, log: opts.Logger, dlHost: dlHost, tel: tel,
		uploads: uploadSlots{Max: opts.MaxUploads, PerMax: opts.MaxUploadsPerPrincipal}}
	s.facts = onetime.New(opts.Backend, s.log)
	if err := s.setUpAuth(); err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("server: listen address %q: %w", opts.Listen, err)
	}
	s.loopback = isLoopbackHost(host)
	if err := s.checkPosture(opts.Listen, s.loopback); err != nil {
		return nil, err
	}
	mo := opts.MCP
	mo.Keyring, mo.Logger = opts.Keyring, opts.Logger
	mo.Instructions, mo.MaxBodyBytes = opts.Instructions, opts.MaxBodyBytes
	mo.Authorize, mo.LiveSessions = s.authorizeMCP, s.facts.LiveSessions()
	if err := s.newMCP(mcp.Implementation{Name: cmp.Or(opts.Name, "mcpblob"), Version: opts.Version}, mo); err != nil {
		return nil, err
	}
	s.fs = s.newFastHTTP()
	s.countStreams()
	s.ready.Store(true)
	return s, nil
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

// checkPosture refuses to serve addr, not a loopback address, without
// authentication.
func (s *Server) checkPosture(addr string, loopback bool) error {
	if !loopback && !s.auth.Enabled() {
		return fmt.Errorf("server: refusing to serve %s without API keys or OAuth on a non-loopback address", addr)
	}
	return nil
}

// setUpAuth loads the API keys and settles the tenancy mode.
func (s *Server) setUpAuth() error {
	keys, err := auth.LoadKeys(s.opts.AuthKeysFile, s.opts.AuthKeys)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.auth = &auth.Authenticator{Keys: keys, OAuth: s.opts.OAuth, Issuer: s.opts.OAuthIssuer}
	mode := s.opts.Tenancy
	if mode == "" {
		mode = "shared"
		if s.auth.Enabled() {
			mode = "principal"
		}
	}
	if s.tenancy.Mode, err = tenancy.ParseMode(mode); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// MCP returns the MCP endpoint (for its event Hub).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Blobs returns the blob application (upload progress and completion).
func (s *Server) Blobs() *blobs.App { return s.blobs }

// newMCP builds the MCP endpoint: the protocol server, the blob
// application registered on it, then Options.Extend.
func (s *Server) newMCP(impl mcp.Implementation, mo mcp.Options) error {
	s.mcp = mcp.NewServer(impl, &mo)
	bo := s.opts.Blobs
	bo.Backend, bo.Keyring, bo.Logger, bo.PublicURL = s.opts.Backend, s.opts.Keyring, s.log, s.opts.PublicURL
	bo.DownloadURL, bo.Tenancy = s.opts.DownloadURL, s.tenancy
	if bo.MaxFileBytes <= 0 {
		bo.MaxFileBytes = mo.MaxFileBytes
	}
	if bo.WaitTimeout <= 0 {
		bo.WaitTimeout = mo.ClientTimeout
	}
	var err error
	if s.blobs, err = blobs.New(bo); err != nil {
		return err
	}
	err = s.blobs.Register(s.mcp) // refused: a blob tool's maxSize above the MCP MaxFileBytes
	if err == nil && s.opts.Extend != nil {
		s.opts.Extend(s.mcp)
	}
	return err
}

// ListenAndServe listens on Options.Listen and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ln)
}

// Serve serves on ln until Shutdown; it returns nil after a graceful
// shutdown. The listener's own address must satisfy the same posture as
// Options.Listen (loopback, or API keys configured).
func (s *Server) Serve(ln net.Listener) error {
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		if err := s.checkPosture(tcp.String(), tcp.IP.IsLoopback()); err != nil {
			return err
		}
	}
	if !s.auth.Enabled() {
		s.log.Warn("server: no API keys configured; the MCP endpoint is open to every local process", "addr", ln.Addr().String())
	}
	s.mu.Lock()
	s.serving = true
	s.mu.Unlock()
	s.log.Info("server: serving", "addr", ln.Addr().String())
	if err := s.startAdmin(); err != nil {
		return err
	}
	go s.facts.Sweep(s.mcp.Context())
	// MaxConns always has a value (limitDefaults), so every connection is
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
	err := s.fs.ShutdownWithContext(ctx)
	if a := s.adminServer(); a != nil {
		_ = a.Close(ctx)
	}
	return err
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	s.tel.BeginRequest(ctx, path)
	defer s.tel.EndRequest(ctx)
	// Every answer, whatever sets or resets it: no browser may sniff a type
	// (stored bytes above all; blobs.SafetyHeaders).
	defer ctx.Response.Header.Set(blobs.HeaderContentTypeOptions, blobs.NoSniff)
	if refuseFraming(ctx) || s.misdirected(ctx, path) { // framing.go, origin.go
		return
	}
	switch {
	case strings.HasPrefix(path, "/v1/"):
		s.serveControl(ctx) // control.go
		return
	case strings.HasPrefix(path, "/d/"):
		s.serveDownload(ctx) // download.go
		return
	case strings.HasPrefix(path, "/u/"):
		s.serveUpload(ctx) // upload.go
		return
	case strings.HasPrefix(path, "/upload/"):
		s.serveUploadPage(ctx) // uploadpage.go
		return
	}
	switch path {
	case "/mcp":
		s.serveMCP(ctx)
	case "/":
		if !index.Serve(ctx, s.opts.Name) {
			s.drainSmall(ctx)
			methodNotAllowed(ctx, "GET, HEAD")
		}
	case auth.MetadataPath, auth.MetadataPathMCP:
		s.serveResourceMetadata(ctx) // identity.go
	case callbackPath:
		s.serveLoginCallback(ctx) // login.go
	case logoutPath:
		s.serveLogout(ctx) // login.go
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
		notFound(ctx)
	}
}

func notFound(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(http.StatusNotFound)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString("not found\n")
}

func jsonError(ctx *fasthttp.RequestCtx, status, code int, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(mcp.ErrorBody(code, msg))
}

func (s *Server) serveMCP(ctx *fasthttp.RequestCtx) {
	id, ok := s.admitMCP(ctx)
	if !ok {
		return
	}
	principal := id.Principal
	req := &mcp.Request{
		Method:    string(ctx.Method()),
		Header:    headerAdapter{&ctx.Request.Header},
		Principal: principal,
		Scopes:    id.Scopes,
		Audience:  s.tenancy.Audience(id),
		// The notification streams the request opens end with its
		// credential: at the token's expiry, or once a key reload drops
		// the key.
		CredentialExpires: id.Expires,
		CredentialValid:   s.auth.StillValid(string(ctx.Request.Header.Peek("Authorization")), id),
	}
	rec := telemetry.Of(ctx)
	req.Note, req.Context = &rec.MCP, rec.Context()
	// The body streams (fasthttp reads ahead at most 8 KiB). core/mcp scans
	// it: data-URI strings go to storage or a spool as they arrive, bounded
	// by their x-mcp-file maxSize (default 1 GiB); the rest is held up to
	// MaxBodyBytes (413 beyond). A body over 64 KiB or of unknown length is
	// an upload and needs a slot while it arrives; every body is read under
	// the rate rule.
	var body *paceReader
	if bs := ctx.RequestBodyStream(); bs != nil {
		if cl := ctx.Request.Header.ContentLength(); string(ctx.Method()) == http.MethodPost && (cl == -1 || cl > mcpUploadThreshold) {
			release, ok := s.takeUploadSlot(ctx, principal, true)
			if !ok {
				return
			}
			defer release()
		}
		body = s.paced(ctx)
		req.Body = body
	} else if b := ctx.Request.Body(); len(b) > 0 {
		req.Body = bytes.NewReader(b)
	}
	s.mcp.ServeMCP(req, &responseAdapter{ctx: ctx, timeout: s.opts.WriteTimeout, tel: s.tel})
	if body != nil {
		s.finishMCPBody(ctx, body)
	}
}

// admitMCP checks Host and Origin and authenticates a request to /mcp,
// returning the caller; on refusal it answers and reports !ok.
func (s *Server) admitMCP(ctx *fasthttp.RequestCtx) (auth.Identity, bool) {
	if why := s.checkHostOrigin(ctx); why != "" {
		jsonError(ctx, http.StatusForbidden, mcp.CodeTransport, "Forbidden: "+why)
		return auth.Identity{}, false
	}
	return s.identify(ctx, true)
}

// finishMCPBody deals with what is left of an MCP request body once the
// response is set: a body cut off by the rate rule gets 408; a moderately
// oversized one (413) is read so the client sees the answer; any other
// body not read to its end is read to its end when short, else the
// connection closes (its rest must not be taken for the next request).
func (s *Server) finishMCPBody(ctx *fasthttp.RequestCtx, body *paceReader) {
	switch {
	case body.Expired:
		ctx.Response.Reset()
		jsonError(ctx, http.StatusRequestTimeout, mcp.CodeTransport, "Request Timeout: the request body arrived slower than the minimum rate")
		ctx.SetConnectionClose()
	case ctx.Response.StatusCode() == http.StatusRequestEntityTooLarge:
		// Let a moderately oversized upload finish so the client reads
		// the 413 instead of a connection reset; beyond that, hang up.
		_, _ = io.CopyN(io.Discard, body, drainLimit)
		ctx.SetConnectionClose()
	case !body.EOF && ctx.Request.Header.ContentLength() != 0:
		// A refusal midway (nesting too deep, a bad member): read a
		// bounded rest under the rate rule, so a pipelined request after
		// it is answered and the client is not reset before it reads the
		// answer; a longer rest closes the connection.
		if n, _ := io.CopyN(io.Discard, body, refusedDrain); n == refusedDrain || !body.EOF {
			ctx.SetConnectionClose()
		}
	}
}

// refusedDrain bounds the rest of a refused MCP body read after the answer.
const refusedDrain = 1 << 20

// drainLimit bounds how much of an oversized request body is read and
// discarded before the 413 response goes out.
const drainLimit = 16 << 20

// checkHostOrigin implements DNS-rebinding protection; it returns why a
// request is refused, or "".
func (s *Server) checkHostOrigin(ctx *fasthttp.RequestCtx) string {
	host := hostOnly(string(ctx.Host()))
	if s.loopback {
		if !isLocalName(host) {
			return "Host is not a localhost name"
		}
	} else if len(s.opts.AllowedHosts) > 0 && !containsFold(s.opts.AllowedHosts, host) {
		return "Host is not allowed"
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	if origin == "" {
		return ""
	}
	for _, o := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "Origin is not allowed"
	}
	if s.loopback {
		if isLocalName(u.Hostname()) {
			return ""
		}
		return "Origin is not a localhost origin"
	}
	if strings.EqualFold(u.Host, string(ctx.Host())) {
		return "" // same origin
	}
	return "Origin is not allowed"
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
	ctx.Response.Header.Set(blobs.HeaderContentTypeOptions, blobs.NoSniff)
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge) && string(ctx.Path()) == "/mcp":
		jsonError(ctx, http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, "Request body too large")
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		apiError(ctx, http.StatusRequestEntityTooLarge, "too_large", "request body too large")
	case errors.As(err, &small):
		apiError(ctx, http.StatusRequestHeaderFieldsTooLarge, "header_too_large",
			fmt.Sprintf("request line and headers over the limit of %d bytes", s.opts.MaxHeaderBytes))
	case errors.As(err, &netErr) && netErr.Timeout():
		apiError(ctx, http.StatusRequestTimeout, "timeout", "the request did not arrive in time")
	default:
		apiError(ctx, http.StatusBadRequest, "bad_request", "malformed HTTP request")
	}
}

// HashKey returns the line to put in an auth keys file for key
// (auth.KeyLine without principal or scopes).
func HashKey(key string) string { return auth.KeyLine(key, "", nil) }

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isLocalName(h string) bool {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.EqualFold(h, "localhost") || h == "127.0.0.1" || h == "::1"
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

type headerAdapter struct{ h *fasthttp.RequestHeader }

func (a headerAdapter) Get(name string) string { return string(a.h.Peek(name)) }

// responseAdapter is the mcp.ResponseWriter over a fasthttp response.
type responseAdapter struct {
	ctx     *fasthttp.RequestCtx
	timeout time.Duration
	tel     *telemetry.Tracker
}

func (r *responseAdapter) SetStatus(code int)           { r.ctx.SetStatusCode(code) }
func (r *responseAdapter) SetHeader(name, value string) { r.ctx.Response.Header.Set(name, value) }
func (r *responseAdapter) SetBody(b []byte)             { r.ctx.Response.SetBodyRaw(b) } // b is the writer's now: no copy

func (r *responseAdapter) SetBodyStream(size int64, write func(mcp.StreamWriter) error) {
	bs := bodystream.New(write, r.ctx.Conn(), r.timeout)
	if size > int64(^uint(0)>>1) {
		size = -1
	}
	r.ctx.Response.SetBodyStream(bodystream.Count(bs), int(size)) // counted: the access log's bytes_out
}

// printfLogger adapts slog to fasthttp's Printf logger (its lines pass the
// redacting handler like every other).
type printfLogger struct{ l *slog.Logger }

func (p printfLogger) Printf(format string, args ...any) {
	p.l.Debug("fasthttp: " + fmt.Sprintf(format, args...))
}
