package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"time"

	"github.com/mcpblob/mcpblob/asm"
	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/metrics"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/server/redact"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/core/server/tracing"
	"github.com/mcpblob/mcpblob/core/tenancy"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/lifecycle"
)

// Options configure a [Server], one group per component. The zero value of
// every field is the documented default; only Backend is required. Each
// setting has one place: the fields the server itself passes to a
// component (Keyring, Logger, Backend, the URLs, the body bound) must be
// left unset in MCP and Blobs, and New refuses them there.
type Options struct {
	// Backend is the blob store. Required. The server does not close it.
	Backend storage.Backend
	// Keyring signs session ids, MRTR requestState, links and upload
	// tokens. nil: a random per-process keyring, fine for one node; a
	// cluster needs the same keys on every node.
	Keyring *token.Keyring
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Metrics receives the server's metrics; nil: a set of its own.
	Metrics *metrics.Set
	// Name and Version form serverInfo. Defaults "mcpblob", "dev".
	Name, Version string
	// Extend registers further tools, resources and prompts on the MCP
	// endpoint after the blob application's (cmd adds the conformance
	// fixtures this way; a Go program its own tools).
	Extend func(*mcp.Server)
	// PublicURL is the base of every URL the server mints (download links,
	// upload endpoints, the upload page), as clients reach it: behind a load
	// balancer, its address. Default "http://" + Front.Listen.
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
	// Auth is who may call: API keys, OAuth, tenancy.
	Auth Auth
	// Front configures the HTTP front (listener, sizes, timeouts,
	// connection caps, Host and Origin, access log, admin listener).
	Front front.Options
	// Limits bound uploads in progress and the rate of request bodies.
	Limits gate.Limits
	// Service configures the blob service (/v1, /d, /u, the upload page).
	Service blobsvc.Options
	// MCP carries core/mcp's tuning (instructions, page size, file size,
	// TTLs, protocol limits).
	MCP mcp.Options
	// Blobs carries the blob application's tuning (stream mode, text size
	// rule, page size, link lifetime, upload accept list).
	Blobs blobs.Options
	// Tracing, when set, traces every request with OpenTelemetry (package
	// tracing; tracing.FromEnv reads the OTEL_* variables). nil: off, at
	// no cost on the request path. The server does not shut it down.
	Tracing *tracing.Provider
	// Gateway, when its Upstream is set, makes /mcp a gateway to that MCP
	// server (package core/gateway; docs/gateway.md) in place of the blob
	// application's endpoint; /v1, /d and /u stay. Its Keyring, Logger,
	// Metrics, PublicURL and Redeem are the server's own and must be left
	// unset.
	Gateway gateway.Options
	// Quota sets per-principal quotas (off by default).
	Quota Quota
	// Lifecycle is blob expiry: prefix rules and the sweeper
	// (docs/lifecycle.md). A blob's own ttlSeconds needs no setting.
	Lifecycle Lifecycle
}

// Lifecycle configures blob expiry (package storage/lifecycle).
type Lifecycle struct {
	// Rules expire blobs under a prefix an age after their last write.
	Rules []lifecycle.Rule
	// SweepEvery is the sweeper's round (default
	// lifecycle.DefaultSweepEvery); SweepList and SweepMax bound a
	// round's listing and deletions (defaults lifecycle.DefaultSweepList,
	// lifecycle.DefaultSweepMax). A negative SweepEvery turns the
	// sweeper's rounds off (expired blobs stay hidden, and stored, until
	// Sweeper().SweepOnce runs).
	SweepEvery          time.Duration
	SweepList, SweepMax int
	// Now is the lifecycle's clock, and resumable uploads' (their
	// Upload-Expires); nil is time.Now (tests move it).
	Now func() time.Time
}

// Auth configures authentication and tenancy.
type Auth struct {
	// KeysFile names a file of accepted API keys, stored hashed: one
	// lower-case hex SHA-256 of a key per line, optionally followed by a
	// principal name and "scopes=read,write,admin" (default read,write);
	// blank lines and '#' comments are ignored (auth.Keys). Clients send
	// "Authorization: Bearer <key>".
	KeysFile string
	// Keys adds hex SHA-256 key digests (same syntax as the file lines).
	Keys []string
	// OAuth, when set, verifies OAuth 2.1 access tokens (package
	// core/auth/oauth): the server is then a protected resource whose
	// metadata names OAuthIssuer (docs/auth.md).
	OAuth auth.TokenVerifier
	// OAuthIssuer is the authorization server's issuer URL, for the
	// protected resource metadata.
	OAuthIssuer string
	// Tenancy is "principal" (a namespace per principal; the default when
	// API keys or OAuth are configured) or "shared" (one namespace for
	// every caller; the default of an open loopback endpoint).
	Tenancy string
}

// Server is mcpblob's HTTP server: the front (package front) with the MCP
// endpoint, and the blob service (package blobsvc) behind it.
type Server struct {
	opts   Options
	log    *slog.Logger
	gate   *gate.Gate
	mcp    *mcp.Server
	blobs  *blobs.App
	facts  *onetime.Facts
	front  *front.Server
	svc    *blobsvc.Server
	quotas *quotas
	sweep  *lifecycle.Sweeper
}

// New validates opts and returns a Server. A non-loopback Listen address
// without any API key is refused.
func New(opts Options) (*Server, error) {
	if err := settle(&opts); err != nil {
		return nil, err
	}
	dlHost, err := resolveURLs(&opts) // urls.go
	if err != nil {
		return nil, err
	}
	stale, _ := opts.Backend.(storage.StaleRemover) // the raw store's, before any wrapper
	tel := setUpTelemetry(&opts)
	q, err := setUpQuota(&opts) // quota.go
	if err != nil {
		return nil, err
	}
	// Expiry wraps the counted store: an expired blob a create replaces,
	// and the sweeper's deletes, go through the quota and give its space
	// back.
	sweep := setUpLifecycle(&opts)
	s := &Server{opts: opts, log: opts.Logger, facts: onetime.New(opts.Backend, opts.Logger), quotas: q, sweep: sweep}
	// The sweeper deletes through the server's backend as it is finally
	// wrapped, so whatever a delete does there (space given back to a
	// quota) an expiry does too.
	sweep.Delete = func(ctx context.Context, key string) error { return s.opts.Backend.Delete(ctx, key) }
	sweep.Stale = stale
	if s.gate, err = newGate(opts); err != nil {
		return nil, err
	}
	if err := s.checkQuotaTenancy(); err != nil {
		return nil, err
	}
	if q != nil {
		s.gate.Auth.Verified = q.claimQuota
	}
	if err := s.newMCP(); err != nil {
		return nil, err
	}
	svc := blobsvc.New(opts.Service, blobsvc.Env{Backend: opts.Backend, Keyring: opts.Keyring, Logger: s.log,
		PublicURL: opts.PublicURL, DownloadURL: opts.DownloadURL, WriteTimeout: opts.Front.WriteTimeout,
		Gate: s.gate, MCP: s.mcp, Blobs: s.blobs, Facts: s.facts, Telemetry: tel, Now: opts.Lifecycle.Now})
	s.svc = svc
	gw, err := s.newGateway()
	if err != nil {
		return nil, err
	}
	s.front = front.New(opts.Front, front.Env{Logger: s.log, Gate: s.gate, MCP: s.mcp, Service: s.quotas.service(svc, s.gate, s.log),
		Telemetry: tel, Name: opts.Name, DownloadURL: opts.DownloadURL, DownloadHost: dlHost, Gateway: gw})
	return s, nil
}

// settle checks opts and fills in the server-wide defaults.
func settle(opts *Options) error {
	if opts.Backend == nil {
		return errors.New("server: Options.Backend is required")
	}
	if err := oneSource(opts); err != nil {
		return err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Every line the server, core/mcp and the blob application log is
	// redacted (package redact): no key, token, presigned query or data URI
	// payload reaches the log, whatever path it took.
	opts.Logger = slog.New(redact.NewHandler(opts.Logger.Handler()))
	if opts.Keyring == nil {
		opts.Keyring = token.NewRandomKeyring() // shared by core/mcp, /d and /u
	}
	opts.Front.Defaults()
	opts.Limits.Defaults()
	return nil
}

// oneSource refuses a setting given in MCP or Blobs that the server passes
// itself, so no field silently overrides another.
func oneSource(opts *Options) error {
	m, b := &opts.MCP, &opts.Blobs
	for name, set := range map[string]bool{
		"MCP.Keyring": m.Keyring != nil, "MCP.Logger": m.Logger != nil,
		"MCP.MaxBodyBytes (use Front.MaxBodyBytes)": m.MaxBodyBytes != 0,
		"MCP.Authorize": m.Authorize != nil, "MCP.LiveSessions": m.LiveSessions != nil,
		"Blobs.Backend": b.Backend != nil, "Blobs.Keyring": b.Keyring != nil, "Blobs.Logger": b.Logger != nil,
		"Blobs.PublicURL": b.PublicURL != "", "Blobs.DownloadURL": b.DownloadURL != "",
		"Blobs.Tenancy (use Auth.Tenancy)": b.Tenancy != (tenancy.Policy{}),
		"Gateway.Keyring":                  opts.Gateway.Keyring != nil, "Gateway.Logger": opts.Gateway.Logger != nil,
		"Gateway.Metrics": opts.Gateway.Metrics != nil, "Gateway.PublicURL": opts.Gateway.PublicURL != "",
		"Gateway.Redeem": opts.Gateway.Redeem != nil, "Gateway.TraceUpstream (use Tracing)": opts.Gateway.TraceUpstream != nil,
		"Gateway.TraceDecode (use Tracing)": opts.Gateway.TraceDecode != nil,
	} {
		if set {
			return fmt.Errorf("server: Options.%s is the server's own; set it at the top of Options", name)
		}
	}
	return nil
}

// setUpTelemetry creates the metric set (unless opts brought one) and
// wraps the backend so its operations are measured: every path's count
// and latency show, below the blob application.
func setUpTelemetry(opts *Options) *telemetry.Tracker {
	if opts.Metrics == nil {
		opts.Metrics = metrics.New(metrics.Build{Version: opts.Version, Go: runtime.Version(),
			CodecEncode: codec.Tier(), CodecDecode: codec.DecodeTier(), JSONScan: asm.JSONScanTier()})
	}
	tel := telemetry.New(opts.Metrics, opts.Logger, opts.Front.AccessLog)
	if opts.Tracing != nil { // a nil *Provider must not become a non-nil hook
		tel.SetTracer(opts.Tracing)
	}
	opts.Backend = telemetry.ObserveBackend(opts.Backend, opts.Metrics, opts.Logger, tel.Tracer())
	return tel
}

// setUpLifecycle wraps the backend so that expired blobs are gone for
// every surface above it, and returns the sweeper that deletes them (New
// points its deletes at the server's one delete path).
func setUpLifecycle(opts *Options) *lifecycle.Sweeper {
	lo := opts.Lifecycle
	policy := &lifecycle.Policy{Rules: lo.Rules, Now: lo.Now}
	opts.Backend = lifecycle.Wrap(opts.Backend, policy)
	m := opts.Metrics
	return &lifecycle.Sweeper{Store: opts.Backend, Policy: policy, Every: max(lo.SweepEvery, 0), List: lo.SweepList,
		Max: lo.SweepMax, Log: opts.Logger,
		Swept: func(info storage.Info) { m.Expired(info.Size) },
		Observe: func(r lifecycle.Round, err error) {
			switch {
			case err != nil:
				m.SweepRound("error")
			case r.Turn:
				m.SweepRound("swept")
			default:
				m.SweepRound("skipped")
			}
		}}
}

// Sweeper returns the lifecycle sweeper (Serve runs its rounds unless
// Lifecycle.SweepEvery is negative).
func (s *Server) Sweeper() *lifecycle.Sweeper { return s.sweep }

// newGate loads the API keys, settles the tenancy mode and the security
// posture, and returns the request rules front and service share.
func newGate(opts Options) (*gate.Gate, error) {
	keys, err := auth.LoadKeys(opts.Auth.KeysFile, opts.Auth.Keys)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	a := &auth.Authenticator{Keys: keys, OAuth: opts.Auth.OAuth, Issuer: opts.Auth.OAuthIssuer}
	mode := opts.Auth.Tenancy
	if mode == "" {
		mode = "shared"
		if a.Enabled() {
			mode = "principal"
		}
	}
	g := &gate.Gate{Auth: a, AllowedHosts: opts.Front.AllowedHosts, AllowedOrigins: opts.Front.AllowedOrigins,
		PublicURL: opts.PublicURL, Log: opts.Logger, ReadTimeout: opts.Front.ReadTimeout,
		Uploads:     &pace.Slots{Max: opts.Limits.MaxUploads, PerMax: opts.Limits.MaxUploadsPerPrincipal},
		BodyMinRate: opts.Limits.BodyMinRate, BodyGrace: opts.Limits.BodyGrace}
	if g.Tenancy.Mode, err = tenancy.ParseMode(mode); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	host, _, err := net.SplitHostPort(opts.Front.Listen)
	if err != nil {
		return nil, fmt.Errorf("server: listen address %q: %w", opts.Front.Listen, err)
	}
	g.Loopback = gate.IsLoopbackHost(host)
	return g, front.CheckPosture(g, opts.Front.Listen, g.Loopback)
}

// newMCP builds the MCP endpoint: the protocol server, the blob
// application registered on it, then Options.Extend.
func (s *Server) newMCP() error {
	mo := s.opts.MCP
	mo.Keyring, mo.Logger, mo.MaxBodyBytes = s.opts.Keyring, s.log, s.opts.Front.MaxBodyBytes
	mo.Authorize = func(principal string, scopes []string, method, name string) *mcp.Error {
		return s.gate.AuthorizeMCP(s.mcp, principal, scopes, method, name)
	}
	mo.LiveSessions = s.facts.LiveSessions()
	if mo.OpenFileURI == nil { // SEP-2631 file URIs as x-mcp-file values
		mo.OpenFileURI = func(u mcp.FileURI) (*mcp.FileSource, error) { return s.blobs.OpenFileURI(u) }
	}
	s.mcp = mcp.NewServer(mcp.Implementation{Name: cmp.Or(s.opts.Name, "mcpblob"), Version: s.opts.Version}, &mo)
	bo := s.opts.Blobs
	bo.Backend, bo.Keyring, bo.Logger, bo.PublicURL = s.opts.Backend, s.opts.Keyring, s.log, s.opts.PublicURL
	bo.DownloadURL, bo.Tenancy, bo.FileURIs = s.opts.DownloadURL, s.gate.Tenancy, mo.OpenFileURI != nil
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

// newGateway builds the gateway of Options.Gateway, nil without an
// Upstream: its downloadUrls on PublicURL, sealed with the server's
// keyring, single use recorded like /d links' (package onetime).
func (s *Server) newGateway() (*gateway.Gateway, error) {
	o := s.opts.Gateway
	if o.Upstream == "" {
		return nil, nil
	}
	o.Keyring, o.Logger, o.Metrics, o.PublicURL = s.opts.Keyring, s.log, s.opts.Metrics, s.opts.PublicURL
	if s.opts.Tracing != nil {
		o.TraceUpstream, o.TraceDecode = telemetry.TraceUpstream(s.opts.Tracing), telemetry.TraceDecode(s.opts.Tracing)
	}
	o.Offload.Store = s.offloads(o) // gateway_offload.go
	// The stream cache's store (gateway_cache.go).
	o.Cache.Store = s.streamCache(o)
	o.Files.Store = s.fileArgs(o) // gateway_files.go
	o.Files.Opener = s.fileOpener(o)
	o.Redeem = func(ctx context.Context, c token.Claims) error {
		return s.facts.ClaimToken(ctx, onetime.Links, c, s.mcp.Claims())
	}
	gw, err := gateway.New(o)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return gw, nil
}

// MCP returns the MCP endpoint (for its event Hub).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Blobs returns the blob application (upload progress and completion).
func (s *Server) Blobs() *blobs.App { return s.blobs }

// ListenAndServe listens on Options.Front.Listen and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.opts.Front.Listen)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ln)
}

// Serve serves on ln until Shutdown; it returns nil after a graceful
// shutdown. The listener's own address must satisfy the same posture as
// Options.Front.Listen (loopback, or API keys configured).
func (s *Server) Serve(ln net.Listener) error {
	go s.facts.Sweep(s.mcp.Context())
	go s.svc.SweepUploads(s.mcp.Context())
	if s.opts.Lifecycle.SweepEvery >= 0 {
		go s.sweep.Run(s.mcp.Context())
	}
	return s.front.Serve(ln)
}

// Shutdown stops the server gracefully: /readyz turns 503, the server keeps
// serving for Front.ShutdownDelay, long-lived MCP streams are ended, then
// in-flight requests get until ctx's deadline (or Front.GracePeriod) to
// finish.
func (s *Server) Shutdown(ctx context.Context) error { return s.front.Shutdown(ctx) }

// AdminAddr is the admin listener's address, nil when there is none.
func (s *Server) AdminAddr() net.Addr { return s.front.AdminAddr() }

// HashKey returns the line to put in an auth keys file for key
// (auth.KeyLine without principal or scopes).
func HashKey(key string) string { return auth.KeyLine(key, "", nil) }
