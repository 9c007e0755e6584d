package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/gateway/h1"
	"github.com/mcpblob/mcpblob/core/gateway/offload"
	"github.com/mcpblob/mcpblob/core/token"
)

// Defaults of [Options].
const (
	DefaultTimeout                = 120 * time.Second
	DefaultDialTimeout            = 10 * time.Second
	DefaultMaxResponseHeaderBytes = 64 << 10
	DefaultMaxRewriteBytes        = 1 << 20
	DefaultMaxSmallBody           = 1 << 20
	DefaultPeekBytes              = 16 << 10
	DefaultStreamTTL              = 5 * time.Minute
	DefaultPrincipalTTL           = 5 * time.Minute
	DefaultKeepAlive              = 15 * time.Second
	DefaultFileSpecTTL            = time.Minute
)

// Principal header modes of [Options].PrincipalMode.
const (
	PrincipalSigned = "signed" // HMAC-signed with PrincipalKey (package principal)
	PrincipalPlain  = "plain"  // as it is: for an upstream on a trusted network only
	PrincipalOff    = "off"    // no principal header
)

// DownloadPrefix is the path prefix of the gateway's own downloadUrls
// ("/g/{token}"), served by [Gateway.ServeDownload].
const DownloadPrefix = "/g/"

// PurposeStream is the token purpose of a gateway downloadUrl.
const PurposeStream = "gateway-stream"

// Options configure a [Gateway]. Upstream and Keyring are required; the
// zero value of every other field is the documented default.
type Options struct {
	// Upstream is the URL of the upstream MCP endpoint (Streamable HTTP).
	Upstream string
	// Token, when set, is the bearer the gateway sends the upstream in
	// Authorization (its own credential; a client's is never forwarded).
	Token string
	// PrincipalMode is how the authenticated principal reaches the
	// upstream in the Mcp-Gateway-Principal header: "signed" (the default
	// when PrincipalKey is set), "plain", or "off" (the default without a
	// key).
	PrincipalMode string
	// PrincipalKey signs the principal header (at least 32 bytes).
	PrincipalKey []byte
	// PrincipalTTL is the lifetime of a signed principal header. Default 5m.
	PrincipalTTL time.Duration
	// Timeout bounds the wait for the upstream's response headers (504
	// beyond); a body, once it flows, has no overall bound. Default 120s.
	Timeout time.Duration
	// KeepAlive is how long a relayed SSE answer may be silent between two
	// events before the gateway writes a comment line to the client (which
	// also finds a client gone). Default 15s.
	KeepAlive time.Duration
	// DialTimeout bounds connecting to the upstream (502 beyond). Default 10s.
	DialTimeout time.Duration
	// MaxResponseHeaderBytes bounds the upstream's response headers.
	// Default 64 KiB.
	MaxResponseHeaderBytes int64
	// MaxRewriteBytes bounds an upstream answer the gateway reads whole to
	// change it (initialize, server/discover). Default 1 MiB.
	MaxRewriteBytes int64
	// MaxSmallBody bounds a client request the gateway reads whole
	// (initialize, server/discover, resources/stream). Default 1 MiB.
	MaxSmallBody int64
	// PeekBytes is how much of a POST body without Mcp-Method the gateway
	// looks at for the JSON-RPC method; a method beyond it is relayed
	// without a look. Default 16 KiB.
	PeekBytes int
	// PublicURL is the base of the gateway's downloadUrls, as clients
	// reach it. Required for resources/stream answers of the gateway's own.
	PublicURL string
	// Keyring seals downloadUrl tokens. Required.
	Keyring *token.Keyring
	// StreamTTL is the lifetime of a downloadUrl. Default 5m.
	StreamTTL time.Duration
	// SingleUse makes each downloadUrl serve one response (Redeem records it).
	SingleUse bool
	// Redeem records a single-use downloadUrl's redemption; it fails for
	// one already redeemed. Required with SingleUse.
	Redeem func(ctx context.Context, c token.Claims) error
	// TraceUpstream, when set, is told of each relayed request's upstream
	// call as it starts (values: the Request's Context; header: the
	// upstream request's, where it may set the trace context) and returns
	// the func that ends it with the outcome ("ok" or an error kind, as
	// Metrics.Upstream). nil: not traced.
	TraceUpstream func(values context.Context, header http.Header) func(outcome string)
	// TraceDecode, when set, is told when a downloadUrl's answer starts to
	// be decoded (values: the Request's Context) and returns the func that
	// ends it with the bytes decoded and whether the decode failed. nil:
	// not traced.
	TraceDecode func(values context.Context) func(decoded int64, failed bool)
	// Decoder turns the upstream's resources/read answer into raw bytes
	// for a downloadUrl. Default: package blobdecode's, with the SIMD
	// codec (BlobDecoder).
	Decoder Decoder
	// Client, when set, is the HTTP client toward the upstream (tests);
	// its Timeout must be zero (streams are long), and it must not follow
	// redirects. Default: package h1's HTTP/1.1 client.
	Client *http.Client
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Metrics receives the upstream's latency and errors and the bytes
	// relayed; nil: none.
	Metrics Metrics

	// FileSpecTTL is how long the gateway trusts the x-mcp-file arguments
	// it read in the upstream's tools/list (fileargs.go). Default 1m.
	FileSpecTTL time.Duration
	// Files delivers file arguments by reference where the upstream asks
	// it (fileargs_ref.go).
	Files FileOptions

	// Offload moves large embedded blobs out of answers (offload.go).
	Offload OffloadOptions
	// Cache keeps downloadUrl bytes for later downloads (cache.go).
	Cache CacheOptions
}

// BlobDecoder is the default Decoder: package blobdecode's streaming
// decoder, the content's mimeType reported just before its first byte when
// the upstream sends it first. The upstream's JSON-RPC error comes back as
// a *ReadError.
func BlobDecoder(body io.Reader, contentType string, id json.RawMessage, w io.Writer, mimeType func(string)) (Freshness, error) {
	res, err := blobdecode.Decode(body, contentType, id, w, blobdecode.Options{Begin: func(h blobdecode.Header) error {
		mimeType(h.MimeType)
		return nil
	}})
	var rpc *blobdecode.RPCError
	if errors.As(err, &rpc) {
		return Freshness{}, &ReadError{Code: int(rpc.Code), Message: rpc.Message}
	}
	return res.Freshness, err
}

// Freshness is what a resources/read answer says about caching its
// content (the stream cache reads it): ttlMs, cacheScope, the content's
// lastModified and a digest of its _meta.
type Freshness = blobdecode.Freshness

// A Decoder reads an upstream's answer to the resources/read request with
// JSON-RPC id id (body, of media type contentType: JSON or an SSE stream)
// and writes the bytes of its first content, the blob decoded or the text
// as UTF-8, to w as they arrive. It calls mimeType with the content's
// mimeType once it is known, possibly after bytes were written, and
// returns the answer's Freshness. An error means the bytes written so far
// are not the resource.
type Decoder func(body io.Reader, contentType string, id json.RawMessage, w io.Writer, mimeType func(string)) (Freshness, error)

// Metrics is where the gateway reports its upstream calls and bytes
// (core/metrics implements it).
type Metrics interface {
	// Upstream records one upstream call that ended with outcome ("ok" or
	// an error kind: unreachable, timeout, credential, status, non_mcp,
	// malformed, over_bounds, broken) after d (to its response headers).
	Upstream(outcome string, d time.Duration)
	// Relayed adds n bytes moved in direction ("to_upstream", "to_client",
	// "decoded").
	Relayed(direction string, n int64)
}

// Gateway relays MCP requests to one upstream, adding what the upstream
// lacks (package doc). Safe for concurrent use.
type Gateway struct {
	opts     Options
	upstream *url.URL
	// roundTrip sends a request upstream: package h1's, or Options.Client's.
	roundTrip func(*http.Request) (*http.Response, error)
	log       *slog.Logger
	metrics   Metrics
	// longLived is the context of GET streams, ended by Close.
	longLived context.Context
	closeAll  context.CancelFunc
	// streams is what this node learnt of the upstream's resources.stream
	// capability from the answers it relayed: 0 unknown, 1 offered, 2 not.
	streams atomic.Int32

	off   *offload.Offloader // nil: no offloading (package offload)
	cache *streamCache       // nil: no stream cache (cache.go)

	files fileargs.Table // the upstream tools' file arguments (fileargs.go)
}

// New returns the gateway of opts (its defaults filled in).
func New(opts Options) (*Gateway, error) {
	u, err := url.Parse(opts.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("gateway: upstream %q: want an absolute http(s) URL", opts.Upstream)
	}
	if opts.Keyring == nil {
		return nil, errors.New("gateway: Options.Keyring is required")
	}
	if err := settlePrincipal(&opts); err != nil {
		return nil, err
	}
	if opts.SingleUse && opts.Redeem == nil {
		return nil, errors.New("gateway: Options.SingleUse needs Options.Redeem")
	}
	defaults(&opts)
	if opts.PublicURL == "" {
		return nil, errors.New("gateway: Options.PublicURL is required (the base of downloadUrls)")
	}
	g := &Gateway{opts: opts, upstream: u, log: opts.Logger, metrics: opts.Metrics}
	g.longLived, g.closeAll = context.WithCancel(context.Background())
	g.roundTrip = newTransport(opts).RoundTrip
	if opts.Client != nil {
		g.roundTrip = opts.Client.Do
	}
	if g.metrics == nil {
		g.metrics = noMetrics{}
	}
	if err := g.initOffload(); err != nil {
		return nil, err
	}
	if err := g.initCache(); err != nil {
		return nil, err
	}
	return g, nil
}

func settlePrincipal(o *Options) error {
	if o.PrincipalMode == "" {
		o.PrincipalMode = PrincipalOff
		if len(o.PrincipalKey) > 0 {
			o.PrincipalMode = PrincipalSigned
		}
	}
	switch o.PrincipalMode {
	case PrincipalSigned:
		if len(o.PrincipalKey) < 32 {
			return errors.New("gateway: a signed principal header needs a key of at least 32 bytes")
		}
	case PrincipalPlain, PrincipalOff:
	default:
		return fmt.Errorf("gateway: principal mode %q: want signed, plain or off", o.PrincipalMode)
	}
	return nil
}

func defaults(o *Options) {
	if o.Decoder == nil {
		o.Decoder = BlobDecoder
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.PrincipalTTL = positive(o.PrincipalTTL, DefaultPrincipalTTL)
	o.Timeout = positive(o.Timeout, DefaultTimeout)
	o.DialTimeout = positive(o.DialTimeout, DefaultDialTimeout)
	o.KeepAlive = positive(o.KeepAlive, DefaultKeepAlive)
	o.MaxResponseHeaderBytes = positive(o.MaxResponseHeaderBytes, DefaultMaxResponseHeaderBytes)
	o.MaxRewriteBytes = positive(o.MaxRewriteBytes, DefaultMaxRewriteBytes)
	o.MaxSmallBody = positive(o.MaxSmallBody, DefaultMaxSmallBody)
	o.PeekBytes = positive(o.PeekBytes, DefaultPeekBytes)
	o.StreamTTL = positive(o.StreamTTL, DefaultStreamTTL)
	o.FileSpecTTL = positive(o.FileSpecTTL, DefaultFileSpecTTL)
	o.Files.LinkTTL = positive(o.Files.LinkTTL, DefaultFileLinkTTL)
}

func positive[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// newTransport is the HTTP client toward the upstream (package h1):
// bounded dial, response-header wait and header size; no compression
// (bytes pass as the upstream sent them); no proxy from the environment;
// redirects returned, never followed (the gateway's credential and the
// signed principal header would go to whatever the Location names).
func newTransport(o Options) *h1.Transport {
	return h1.New(h1.Options{DialTimeout: o.DialTimeout, HeaderTimeout: o.Timeout,
		MaxHeaderBytes: o.MaxResponseHeaderBytes, MaxIdle: 256, IdleTimeout: 90 * time.Second})
}

// Close ends the GET streams being relayed (shutdown); requests in
// flight finish.
func (g *Gateway) Close() { g.closeAll() }

// Upstream returns the upstream URL (for logs: without its query).
func (g *Gateway) Upstream() string {
	u := *g.upstream
	u.RawQuery, u.User = "", nil
	return u.String()
}

type noMetrics struct{}

func (noMetrics) Upstream(string, time.Duration) {}
func (noMetrics) Relayed(string, int64)          {}
