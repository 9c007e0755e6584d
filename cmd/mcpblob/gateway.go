package main

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
)

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
	if c.FileLinkTTL <= 0 || c.FileLinkTTL > 24*time.Hour {
		errs = append(errs, errors.New("--upstream-file-link-ttl: want a duration within (0, 24h]"))
	}
	if c.StreamCacheTTL <= 0 {
		errs = append(errs, errors.New("--stream-cache-ttl: want a positive duration"))
	}
	if c.OffloadOver < 0 {
		errs = append(errs, errors.New("--offload-over: want a size in bytes (0: off)"))
	}
	return errs
}

// gatewayOptions are the gateway's options of c (zero without --upstream).
func gatewayOptions(c Config) gateway.Options {
	if c.Upstream == "" {
		return gateway.Options{}
	}
	o := gateway.Options{Upstream: c.Upstream, Token: c.UpstreamToken, PrincipalMode: c.UpstreamPrincipal,
		Timeout: c.UpstreamTimeout, StreamTTL: c.UpstreamStreamTTL, SingleUse: c.UpstreamSingleUse,
		Offload: gateway.OffloadOptions{Over: c.OffloadOver},
		Cache:   gateway.CacheOptions{On: c.StreamCache, TTL: c.StreamCacheTTL},
		Files:   gateway.FileOptions{LinkTTL: c.FileLinkTTL}}
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
