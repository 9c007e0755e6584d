package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
)

// gatewayFlags adds the gateway's flags (docs/gateway.md). Its secrets
// come from the environment only: MCPBLOB_UPSTREAM_TOKEN and
// MCPBLOB_UPSTREAM_PRINCIPAL_KEY.
func gatewayFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Upstream, "upstream", "", "URL of an MCP server (Streamable HTTP) to put the gateway in front of: /mcp is relayed to it (token in MCPBLOB_UPSTREAM_TOKEN)")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", gateway.DefaultTimeout, "wait for the upstream's response headers before answering 504")
	fs.StringVar(&c.UpstreamPrincipal, "upstream-principal", "", "principal header toward the upstream: signed (key in MCPBLOB_UPSTREAM_PRINCIPAL_KEY; the default with a key), plain (trusted network only) or off (the default without a key)")
	fs.DurationVar(&c.UpstreamStreamTTL, "upstream-stream-ttl", gateway.DefaultStreamTTL, "lifetime of the gateway's own resources/stream downloadUrls")
	fs.BoolVar(&c.UpstreamSingleUse, "upstream-single-use", false, "each of the gateway's downloadUrls serves one response")
}

// validateGateway checks the gateway's settings; secrets never appear in
// an error.
func (c Config) validateGateway() []error {
	var errs []error
	if c.Upstream == "" {
		if c.UpstreamPrincipal != "" || c.UpstreamToken != "" || c.UpstreamPrincipalKey != "" || c.UpstreamSingleUse {
			errs = append(errs, errors.New("--upstream-principal, --upstream-single-use, MCPBLOB_UPSTREAM_TOKEN and MCPBLOB_UPSTREAM_PRINCIPAL_KEY need --upstream"))
		}
		return errs
	}
	if u, err := url.Parse(c.Upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		errs = append(errs, fmt.Errorf("--upstream: want an absolute http(s) URL without credentials"))
	}
	switch c.UpstreamPrincipal {
	case "", gateway.PrincipalPlain, gateway.PrincipalOff:
	case gateway.PrincipalSigned:
		if c.UpstreamPrincipalKey == "" {
			errs = append(errs, errors.New("--upstream-principal signed needs MCPBLOB_UPSTREAM_PRINCIPAL_KEY"))
		}
	default:
		errs = append(errs, fmt.Errorf("--upstream-principal %q: want signed, plain or off", c.UpstreamPrincipal))
	}
	if k := c.UpstreamPrincipalKey; k != "" && len(k) < 32 {
		errs = append(errs, errors.New("MCPBLOB_UPSTREAM_PRINCIPAL_KEY: want at least 32 bytes"))
	}
	if c.UpstreamTimeout <= 0 || c.UpstreamStreamTTL <= 0 || c.UpstreamStreamTTL > 24*time.Hour {
		errs = append(errs, errors.New("--upstream-timeout must be positive and --upstream-stream-ttl within (0, 24h]"))
	}
	return errs
}

// gatewayOptions are the gateway's options of c (zero without --upstream).
func gatewayOptions(c Config) gateway.Options {
	if c.Upstream == "" {
		return gateway.Options{}
	}
	o := gateway.Options{Upstream: c.Upstream, Token: c.UpstreamToken, PrincipalMode: c.UpstreamPrincipal,
		Timeout: c.UpstreamTimeout, StreamTTL: c.UpstreamStreamTTL, SingleUse: c.UpstreamSingleUse}
	if c.UpstreamPrincipalKey != "" {
		o.PrincipalKey = []byte(c.UpstreamPrincipalKey)
	}
	return o
}

// redactedUpstream is the upstream URL for the start-up log: without its
// query (which may hold a secret).
func redactedUpstream(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return s
	}
	u.RawQuery, u.User = "", nil
	return u.String()
}
