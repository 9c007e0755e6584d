package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/storage/quota"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/storage/lifecycle"
)

// Config is the effective configuration of `mcpblob serve`. Precedence: flag,
// then environment (MCPBLOB_ plus the flag's upper snake-case name), then the
// default shown in the flag's help.
type Config struct {
	Listen              string
	Data                string
	S3Endpoint          string // URL, e.g. http://127.0.0.1:9000; empty selects the local store
	S3Bucket            string
	S3Region            string
	PublicURL           string // base URL of minted links; default http://<listen>
	DownloadURL         string // base URL of download links on a separate origin; default PublicURL
	AuthKeys            string // file of hashed API keys
	OAuthIssuer         string // OAuth 2.1 authorization server (issuer URL)
	OAuthAudience       string // required token audience; default <public-url>/mcp
	OAuthClientID       string // mcpblob's own client id, for the upload page login
	TenantClaim         string // token claim naming the principal; default sub
	Tenancy             string // principal | shared; default principal with auth, shared without
	LinkAuth            bool   // download links also need the minting principal's credential
	TokenKeys           string // file of HMAC keys for links, sessions and states
	ConformanceFixtures bool
	StreamMode          string // direct | redirect | url
	DownloadRedirect    bool   // /d answers 302 to a presigned URL on S3
	MaxUpload           int64  // control-API PUT and upload-endpoint limit in bytes
	LogFormat           string // text | json
	LogLevel            string // debug | info | warn | error
	AccessLog           bool
	AdminListen         string
	AdminHosts          string // comma-separated Host names the admin listener answers besides localhost and addresses
	ShutdownDelay       time.Duration
	GracePeriod         time.Duration

	// Lifecycle (docs/lifecycle.md): prefix rules "uploads/=7d,tmp/=36h"
	// and the sweeper's round (negative: no sweeper).
	Lifecycle           string
	LifecycleSweepEvery time.Duration

	// The gateway (docs/gateway.md): /mcp relayed to Upstream.
	Upstream          string        // URL of the upstream MCP endpoint; empty: no gateway
	UpstreamTimeout   time.Duration // wait for the upstream's response headers
	UpstreamPrincipal string        // signed | plain | off: the principal header toward the upstream
	UpstreamStreamTTL time.Duration // lifetime of the gateway's own downloadUrls
	UpstreamSingleUse bool          // each downloadUrl serves one response
	OffloadOver       int64         // embedded blobs over this many decoded bytes leave the answers; 0: off
	StreamCache       bool          // downloadUrl bytes kept in the store for later downloads
	StreamCacheTTL    time.Duration // how long a cached resource is served without the upstream
	FileLinkTTL       time.Duration // lifetime of the links to files the upstream takes by reference

	// Limits against slow or many clients (docs/security.md "Limits").
	MaxConns               int           // connections served at once
	MaxConnsPerIP          int           // connections from one address; 0: no bound
	MaxUploads             int           // uploads in progress
	MaxUploadsPerPrincipal int           // uploads in progress of one principal
	BodyMinRate            int64         // bytes per second a body must average; 0: no rate rule
	BodyGrace              time.Duration // slow start of the rate rule

	// Protocol state per principal and per node (docs/security.md
	// "Protocol state"); 0 on the command line is no bound.
	ProtocolLimits limits.Limits

	// Quotas per principal (docs/quotas.md).
	QuotaBytes      sizeFlag      // default bytes quota; 0: none
	QuotaObjects    int64         // default objects quota; 0: none
	QuotaFile       string        // file of per-principal quotas, reloaded on SIGHUP
	QuotaHoldTTL    time.Duration // life of an upload's reservation without renewal
	OAuthQuotaClaim string        // access token claim naming the principal's quota

	// S3 credentials come only from the environment (never flags: flags show in ps).
	S3AccessKey string
	S3SecretKey string
	// OAuthClientSecret is the upload page login client's secret, from env
	// MCPBLOB_OAUTH_CLIENT_SECRET only (empty: a public client with PKCE).
	OAuthClientSecret string
	// AdminToken is the bearer every admin listener request must carry,
	// from env MCPBLOB_ADMIN_TOKEN only (a flag would show in ps and in
	// /debug/pprof/cmdline); empty: none.
	AdminToken string
	// UpstreamToken is the bearer the gateway sends its upstream, from env
	// MCPBLOB_UPSTREAM_TOKEN only (never a flag, never logged).
	UpstreamToken string
	// UpstreamPrincipalKey signs the principal header (at least 32 bytes),
	// from env MCPBLOB_UPSTREAM_PRINCIPAL_KEY only.
	UpstreamPrincipalKey string
	// TokenKeysData is the token keys file's text from env
	// MCPBLOB_TOKEN_KEYS_DATA (never a flag); it wins over --token-keys.
	TokenKeysData string
}

// errHelp reports that -h was asked for and the usage already printed.
var errHelp = flag.ErrHelp

// envName maps a flag name to its environment variable: s3-bucket → MCPBLOB_S3_BUCKET.
func envName(flagName string) string {
	return "MCPBLOB_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// loadConfig parses serve's flags, then fills every flag not given on the
// command line from the environment.
func loadConfig(args []string, getenv func(string) string, errOut io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("mcpblob serve", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.Data, "data", "./data", "folder of the embedded local store")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", "", "S3 endpoint URL (http://host:port or https://…); selects the S3 store")
	fs.StringVar(&c.S3Bucket, "s3-bucket", "mcpblob", "S3 bucket (created at start when missing)")
	fs.StringVar(&c.S3Region, "s3-region", "us-east-1", "S3 region (keeps presigning offline)")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL of minted links (default http://<listen>)")
	fs.StringVar(&c.DownloadURL, "download-url", "", "base URL of download links (/d) on a separate origin, the user-content-domain pattern: another host than --public-url, ideally another registrable domain (default: --public-url)")
	fs.StringVar(&c.AuthKeys, "auth-keys", "", "file of hashed API keys (required for non-loopback binds)")
	fs.StringVar(&c.OAuthIssuer, "oauth-issuer", "", "OAuth 2.1 authorization server issuer URL (https, or http on a loopback address); makes mcpblob a protected resource that accepts its JWT access tokens")
	fs.StringVar(&c.OAuthAudience, "oauth-audience", "", "audience access tokens must carry (default: <public-url>/mcp, the canonical resource URI)")
	fs.StringVar(&c.OAuthClientID, "oauth-client-id", "", "mcpblob's client id at the authorization server, for the upload page login (secret in MCPBLOB_OAUTH_CLIENT_SECRET)")
	fs.StringVar(&c.TenantClaim, "tenant-claim", "", "access token claim that names the principal (default: sub)")
	fs.StringVar(&c.Lifecycle, "lifecycle", "", "expiry rules: prefix=age[,prefix=age…], an age in days (7d) or a duration (36h): blobs under the prefix expire that long after their last write (docs/lifecycle.md)")
	fs.DurationVar(&c.LifecycleSweepEvery, "lifecycle-sweep-every", time.Minute, "round of the sweeper that deletes expired blobs (one node per round); negative: no sweeper")
	fs.StringVar(&c.Tenancy, "tenancy", "", "principal (a namespace per principal) or shared (one namespace); default principal when API keys or OAuth are configured")
	fs.BoolVar(&c.LinkAuth, "link-auth", false, "download links (/d) also require the minting principal's credential")
	fs.StringVar(&c.TokenKeys, "token-keys", "", "file of token signing keys (default: generated in <data>/.mcpblob/token-keys on the local store)")
	fs.BoolVar(&c.ConformanceFixtures, "conformance-fixtures", false, "add the MCP conformance suite's fixture tools, resources and prompts")
	fs.StringVar(&c.StreamMode, "stream-mode", "", "resources/stream mode: direct, redirect or url (default: redirect on S3, direct on the local store)")
	fs.BoolVar(&c.DownloadRedirect, "download-redirect", false, "on S3, answer download links (/d) with a 302 to a presigned URL instead of streaming the bytes")
	fs.Int64Var(&c.MaxUpload, "max-upload", 5<<30, "largest control-API PUT body and upload endpoint in bytes")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&c.AccessLog, "access-log", true, "log every request at info: request id, route, status, bytes, duration, principal, MCP method and tool (log lines are batched: written within 100 ms, warnings and errors at once, all at exit)")
	fs.StringVar(&c.AdminListen, "admin-listen", "", "address of the admin listener serving /metrics and /debug/pprof/ (the main listener then serves neither)")
	fs.StringVar(&c.AdminHosts, "admin-hosts", "", "comma-separated Host names the admin listener answers besides localhost and IP addresses (any port); others get 403")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", 0, "time between /readyz turning 503 and the listener closing")
	fs.DurationVar(&c.GracePeriod, "grace-period", 30*time.Second, "time in-flight requests get to finish at shutdown")
	fs.IntVar(&c.MaxConns, "max-conns", 4096, "connections served at once; one more is answered 503 and closed")
	fs.IntVar(&c.MaxConnsPerIP, "max-conns-per-ip", 0, "connections from one client address (0: no bound; set it on a node facing clients directly)")
	fs.IntVar(&c.MaxUploads, "max-uploads", 128, "uploads in progress (PUT /v1/blobs, /u, MCP bodies over 64 KiB); one more is answered 503 with Retry-After")
	fs.IntVar(&c.MaxUploadsPerPrincipal, "max-uploads-per-principal", 32, "uploads in progress of one principal; one more is answered 429 with Retry-After")
	fs.Int64Var(&c.BodyMinRate, "body-min-rate", 4096, "bytes per second a request body must average after --body-grace (0: no rate rule)")
	fs.DurationVar(&c.BodyGrace, "body-grace", 10*time.Second, "slow start of a request body before --body-min-rate applies")
	protocolLimitFlags(fs, &c.ProtocolLimits)
	gatewayFlags(fs, &c)
	quotaFlags(fs, &c)
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		return c, err
	}
	if len(rest) > 0 {
		return c, fmt.Errorf("unexpected argument %q", rest[0])
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := f.Value.Set(v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	c.S3AccessKey = getenv("MCPBLOB_S3_ACCESS_KEY")
	c.S3SecretKey = getenv("MCPBLOB_S3_SECRET_KEY")
	c.TokenKeysData = getenv("MCPBLOB_TOKEN_KEYS_DATA")
	c.OAuthClientSecret = getenv("MCPBLOB_OAUTH_CLIENT_SECRET")
	c.AdminToken = getenv("MCPBLOB_ADMIN_TOKEN")
	c.UpstreamToken = getenv("MCPBLOB_UPSTREAM_TOKEN")
	c.UpstreamPrincipalKey = getenv("MCPBLOB_UPSTREAM_PRINCIPAL_KEY")
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Listen
	}
	return c, c.Validate()
}

// gatewayFlags adds the gateway's flags (docs/gateway.md; in this file,
// where deploy/validate reads the flags). Its secrets come from the
// environment only: MCPBLOB_UPSTREAM_TOKEN and
// MCPBLOB_UPSTREAM_PRINCIPAL_KEY.
func gatewayFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Upstream, "upstream", "", "URL of an MCP server (Streamable HTTP) to put the gateway in front of: /mcp is relayed to it (token in MCPBLOB_UPSTREAM_TOKEN)")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", gateway.DefaultTimeout, "wait for the upstream's response headers before answering 504")
	fs.StringVar(&c.UpstreamPrincipal, "upstream-principal", "", "principal header toward the upstream: signed (key in MCPBLOB_UPSTREAM_PRINCIPAL_KEY; the default with a key), plain (trusted network only) or off (the default without a key)")
	fs.DurationVar(&c.UpstreamStreamTTL, "upstream-stream-ttl", gateway.DefaultStreamTTL, "lifetime of the gateway's own resources/stream downloadUrls")
	fs.BoolVar(&c.UpstreamSingleUse, "upstream-single-use", false, "each of the gateway's downloadUrls serves one response")
	fs.Int64Var(&c.OffloadOver, "offload-over", gateway.DefaultOffloadOver, "embedded blobs over this many decoded bytes in the upstream's tools/call and resources/read answers are stored and replaced by resource_links (0: off)")
	fs.BoolVar(&c.StreamCache, "stream-cache", true, "keep the bytes of the gateway's resources/stream downloads in the store, per principal, and serve later downloads of the same resource from there (Range, sendfile or a presigned redirect) until the upstream announces a change or --stream-cache-ttl passes")
	fs.DurationVar(&c.StreamCacheTTL, "stream-cache-ttl", gateway.DefaultCacheTTL, "how long a resource in the stream cache is served without asking the upstream")
	fs.DurationVar(&c.FileLinkTTL, "upstream-file-link-ttl", gateway.DefaultFileLinkTTL, "lifetime of the link an upstream gets in place of a file argument it takes by reference (x-mcp-file \"delivery\":\"reference\")")
}

// Validate checks values that flag parsing cannot.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen %q: %w", c.Listen, err))
	}
	if c.S3Endpoint != "" {
		if u, err := url.Parse(c.S3Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--s3-endpoint %q: want http://host:port or https://host", c.S3Endpoint))
		}
		if c.S3Bucket == "" {
			errs = append(errs, errors.New("--s3-bucket is required with --s3-endpoint"))
		}
	} else if c.Data == "" {
		errs = append(errs, errors.New("--data is required without --s3-endpoint"))
	}
	if c.Tenancy != "" && c.Tenancy != "principal" && c.Tenancy != "shared" {
		errs = append(errs, fmt.Errorf("--tenancy %q: want principal or shared", c.Tenancy))
	}
	if c.OAuthIssuer == "" && (c.OAuthAudience != "" || c.TenantClaim != "" || c.OAuthClientID != "") {
		errs = append(errs, errors.New("--oauth-audience, --tenant-claim and --oauth-client-id need --oauth-issuer"))
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--public-url %q: want an absolute http(s) URL", c.PublicURL))
	}
	if c.DownloadURL != "" {
		d, err := url.Parse(c.DownloadURL)
		p, _ := url.Parse(c.PublicURL)
		switch {
		case err != nil || (d.Scheme != "http" && d.Scheme != "https") || d.Host == "" || strings.Trim(d.Path, "/") != "":
			errs = append(errs, fmt.Errorf("--download-url %q: want an absolute http(s) URL without a path", c.DownloadURL))
		case p != nil && strings.EqualFold(d.Hostname(), p.Hostname()):
			errs = append(errs, fmt.Errorf("--download-url %q: must be on another host than --public-url %q", c.DownloadURL, c.PublicURL))
		}
	}
	switch c.StreamMode {
	case "", "direct", "redirect", "url":
	default:
		errs = append(errs, fmt.Errorf("--stream-mode %q: want direct, redirect or url", c.StreamMode))
	}
	if c.MaxUpload <= 0 {
		errs = append(errs, fmt.Errorf("--max-upload %d: want a positive byte count", c.MaxUpload))
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.LogLevel))
	}
	if c.ShutdownDelay < 0 || c.GracePeriod < 0 {
		errs = append(errs, errors.New("--shutdown-delay and --grace-period must not be negative"))
	}
	if _, err := lifecycle.ParseRules(c.Lifecycle); err != nil {
		errs = append(errs, fmt.Errorf("--lifecycle: %w", err))
	}
	if c.LifecycleSweepEvery >= 0 && c.LifecycleSweepEvery < time.Second {
		errs = append(errs, fmt.Errorf("--lifecycle-sweep-every %v: want at least 1s, or negative for no sweeper", c.LifecycleSweepEvery))
	}
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, c.validateAdmin()...)
	errs = append(errs, c.validateGateway()...)
	errs = append(errs, c.validateQuota()...)
	return errors.Join(errs...)
}

// validateAdmin checks the admin listener's settings. The token's value
// never appears in an error.
func (c Config) validateAdmin() []error {
	var errs []error
	if c.AdminListen == "" && (c.AdminHosts != "" || c.AdminToken != "") {
		errs = append(errs, errors.New("--admin-hosts and MCPBLOB_ADMIN_TOKEN need --admin-listen"))
	}
	if c.AdminListen != "" {
		if _, _, err := net.SplitHostPort(c.AdminListen); err != nil {
			errs = append(errs, fmt.Errorf("--admin-listen %q: %w", c.AdminListen, err))
		}
	}
	if t := c.AdminToken; t != "" && (len(t) < 16 || len(t) > 512 || strings.IndexFunc(t, notTokenChar) >= 0) {
		errs = append(errs, errors.New("MCPBLOB_ADMIN_TOKEN: want 16 to 512 printable characters without spaces"))
	}
	for _, h := range adminHosts(c.AdminHosts) {
		if strings.ContainsAny(h, "/:@ []") {
			errs = append(errs, fmt.Errorf("--admin-hosts: %q is not a host name (no port, scheme or path)", h))
		}
	}
	return errs
}

// notTokenChar reports a character an admin token may not hold: a space
// or a control character, which an Authorization header cannot carry.
func notTokenChar(r rune) bool { return r <= ' ' || r == 0x7f }

// adminHosts splits --admin-hosts at commas, dropping blanks.
func adminHosts(list string) []string {
	var out []string
	for h := range strings.SplitSeq(list, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// isLoopback reports whether a listen address binds only the loopback interface.
func isLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateLimits checks the limits against slow or many clients.
func (c Config) validateLimits() []error {
	var errs []error
	for _, l := range []struct {
		name string
		v    int64
		min  int64
	}{{"--max-conns", int64(c.MaxConns), 1}, {"--max-conns-per-ip", int64(c.MaxConnsPerIP), 0},
		{"--max-uploads", int64(c.MaxUploads), 1}, {"--max-uploads-per-principal", int64(c.MaxUploadsPerPrincipal), 1},
		{"--body-min-rate", c.BodyMinRate, 0}} {
		if l.v < l.min {
			errs = append(errs, fmt.Errorf("%s %d: want at least %d", l.name, l.v, l.min))
		}
	}
	if c.BodyGrace <= 0 {
		errs = append(errs, fmt.Errorf("--body-grace %v: want a positive duration", c.BodyGrace))
	}
	return errs
}

// quotaFlags adds the quota flags (docs/quotas.md).
func quotaFlags(fs *flag.FlagSet, c *Config) {
	fs.Var(&c.QuotaBytes, "quota-bytes", "bytes each principal may store unless its key line, token or --quota-file says otherwise (a number, or with K, M, G, T: binary units); 0: no bytes quota")
	fs.Int64Var(&c.QuotaObjects, "quota-objects", 0, "objects each principal may store unless its key line, token or --quota-file says otherwise; 0: no objects quota")
	fs.StringVar(&c.QuotaFile, "quota-file", "", "file of per-principal quotas, one \"PRINCIPAL bytes=SIZE objects=N\" per line, reloaded on SIGHUP")
	fs.DurationVar(&c.QuotaHoldTTL, "quota-hold-ttl", quota.DefaultHoldTTL, "how long an upload's reservation outlives its last byte when its node dies (resumable uploads: 96 times as long)")
	fs.StringVar(&c.OAuthQuotaClaim, "oauth-quota-claim", "", "access token claim holding the principal's quota: a number of bytes, or {\"bytes\":N,\"objects\":N}")
}

// validateQuota checks the quota settings.
func (c Config) validateQuota() []error {
	var errs []error
	if c.QuotaObjects < 0 || c.QuotaHoldTTL <= 0 {
		errs = append(errs, errors.New("--quota-objects must not be negative and --quota-hold-ttl must be positive"))
	}
	if c.OAuthQuotaClaim != "" && c.OAuthIssuer == "" {
		errs = append(errs, errors.New("--oauth-quota-claim needs --oauth-issuer"))
	}
	if c.quotasOn() && c.Tenancy == "shared" {
		errs = append(errs, errors.New("quotas count per principal namespace: they need --tenancy principal"))
	}
	return errs
}

// quotasOn reports whether any quota setting is given.
func (c Config) quotasOn() bool {
	return c.QuotaBytes > 0 || c.QuotaObjects > 0 || c.QuotaFile != "" || c.OAuthQuotaClaim != ""
}

// sizeFlag is a byte count given as a number with an optional binary
// unit (auth.ParseSize).
type sizeFlag int64

func (f *sizeFlag) String() string { return strconv.FormatInt(int64(*f), 10) }

func (f *sizeFlag) Set(s string) error {
	n, err := auth.ParseSize(s)
	*f = sizeFlag(n)
	return err
}
