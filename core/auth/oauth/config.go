package oauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Defaults and limits for [Config] and the documents [New] reads.
const (
	DefaultTenantClaim = "sub"
	DefaultLeeway      = 30 * time.Second
	MaxLeeway          = 5 * time.Minute
	DefaultMinRefresh  = 30 * time.Second
	DefaultMaxAge      = 10 * time.Minute
	DefaultHTTPTimeout = 10 * time.Second

	maxBody      = 1 << 20 // bytes read from any metadata or JWKS response
	maxKeys      = 100     // keys in one JWKS
	maxToken     = 16 << 10
	maxRedirects = 5
)

// Config configures a [Verifier]. The zero value of every field except
// Issuer and Audience selects the documented default.
type Config struct {
	// Issuer is the authorization server's issuer identifier. It must be an
	// https URL without query or fragment; http is allowed only when the host
	// is a loopback address (127.0.0.0/8, ::1, localhost). Tokens must carry
	// exactly this string as "iss", and the discovered metadata must name it
	// exactly (RFC 8414 §3.3).
	Issuer string
	// Audience is this resource server's canonical URI (RFC 8707). Required;
	// a token's "aud" (string or array) must contain it.
	Audience string
	// TenantClaim names the claim holding the principal that per-user state
	// is keyed by. Default "sub". The claim must be a non-empty string.
	TenantClaim string
	// QuotaClaim, when set, names the claim holding the principal's quota
	// (docs/quotas.md): a number of bytes, a size string ("10GiB"), or
	// {"bytes": N, "objects": N}. Absent: the token names no quota.
	QuotaClaim string
	// Leeway is the clock skew allowed on exp, nbf and iat. Default 30s,
	// at most [MaxLeeway].
	Leeway time.Duration
	// Algorithms optionally narrows the accepted JWS algorithms to a subset
	// of the asymmetric set (RS256/384/512, PS256/384/512, ES256/384/512,
	// EdDSA). Empty means the whole asymmetric set.
	Algorithms []string
	// HTTPClient fetches the metadata and the JWKS. Default: a client with a
	// [DefaultHTTPTimeout] timeout. Either way redirects are followed at most
	// 5 times and never to a URL that is not https (loopback exempt).
	HTTPClient *http.Client
	// MinRefresh is the minimum interval between JWKS fetches, whether
	// triggered by an unknown kid or by age. Default 30s.
	MinRefresh time.Duration
	// MaxAge is how long a fetched JWKS is used before it is fetched again
	// (so a key removed by rotation stops verifying). Default 10 min. A
	// shorter Cache-Control max-age on the JWKS response wins, but never
	// below MinRefresh.
	MaxAge time.Duration
	// Logger receives startup and refresh events; nil discards them.
	Logger *slog.Logger
}

// asymmetric is the full allow-list, in preference order.
var asymmetric = []jose.SignatureAlgorithm{
	jose.EdDSA, jose.ES256, jose.ES384, jose.ES512,
	jose.PS256, jose.PS384, jose.PS512, jose.RS256, jose.RS384, jose.RS512,
}

// withDefaults validates c and returns it with defaults filled in, plus the
// parsed issuer and the algorithm allow-list.
func (c Config) withDefaults() (Config, *url.URL, []jose.SignatureAlgorithm, error) {
	iss, err := parseIssuer(c.Issuer)
	if err != nil {
		return c, nil, nil, err
	}
	if c.Audience == "" {
		return c, nil, nil, errors.New("oauth: config: Audience is required")
	}
	if c.TenantClaim == "" {
		c.TenantClaim = DefaultTenantClaim
	}
	if !printable(c.TenantClaim) {
		return c, nil, nil, fmt.Errorf("oauth: config: TenantClaim %q must be printable ASCII without quotes or backslashes", c.TenantClaim)
	}
	c.Leeway = orDefault(c.Leeway, DefaultLeeway)
	c.MinRefresh = orDefault(c.MinRefresh, DefaultMinRefresh)
	c.MaxAge = orDefault(c.MaxAge, DefaultMaxAge)
	switch {
	case c.Leeway < 0 || c.Leeway > MaxLeeway:
		return c, nil, nil, fmt.Errorf("oauth: config: Leeway %v outside [0, %v]", c.Leeway, MaxLeeway)
	case c.MinRefresh < 0 || c.MaxAge < 0:
		return c, nil, nil, errors.New("oauth: config: MinRefresh and MaxAge must not be negative")
	case c.MaxAge < c.MinRefresh:
		return c, nil, nil, fmt.Errorf("oauth: config: MaxAge %v is below MinRefresh %v", c.MaxAge, c.MinRefresh)
	}
	algs, err := allowList(c.Algorithms)
	if err != nil {
		return c, nil, nil, err
	}
	c.HTTPClient = httpClient(c.HTTPClient)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, iss, algs, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x21 || b > 0x7e || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}

// allowList returns names as signature algorithms, refusing anything outside
// the asymmetric set; empty names means the whole set.
func allowList(names []string) ([]jose.SignatureAlgorithm, error) {
	if len(names) == 0 {
		return asymmetric, nil
	}
	var out []jose.SignatureAlgorithm
	for _, n := range names {
		alg := jose.SignatureAlgorithm(n)
		if !slices.Contains(asymmetric, alg) {
			return nil, fmt.Errorf("oauth: config: algorithm %q is not an allowed asymmetric JWS algorithm", n)
		}
		if !slices.Contains(out, alg) {
			out = append(out, alg)
		}
	}
	return out, nil
}

// parseIssuer checks the issuer identifier (RFC 8414 §2).
func parseIssuer(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return nil, fmt.Errorf("oauth: config: Issuer %q is not a URL", s)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return nil, fmt.Errorf("oauth: config: Issuer %q must not have a query, fragment or user info", s)
	}
	if err := checkSecure(u); err != nil {
		return nil, fmt.Errorf("oauth: config: Issuer: %w", err)
	}
	return u, nil
}

// checkSecure refuses URLs that are not https, except http to a loopback host.
func checkSecure(u *url.URL) error {
	if u.Host == "" {
		return fmt.Errorf("%q has no host", u.Redacted())
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%q is not https (http is allowed only for loopback hosts)", u.Redacted())
}

// loopback reports whether host is localhost or a loopback IP address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// httpClient returns a copy of c (or a default client) whose redirects are
// limited in number and never leave https (loopback exempt).
func httpClient(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	} else {
		out.Timeout = DefaultHTTPTimeout
	}
	next := out.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("oauth: more than %d redirects", maxRedirects)
		}
		if err := checkSecure(req.URL); err != nil {
			return fmt.Errorf("oauth: redirect refused: %w", err)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &out
}
