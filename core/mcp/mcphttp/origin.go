package mcphttp

import (
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/hostorigin"
)

// policy is the DNS-rebinding rule of opts (package hostorigin, shared
// with mcpblob's fasthttp front): without AllowedHosts, the loopback
// rule (localhost names as Host, localhost origins); with them, those
// hosts and same-origin requests. AllowedOrigins are accepted either way.
func policy(opts Options) hostorigin.Policy {
	return hostorigin.Policy{Loopback: len(opts.AllowedHosts) == 0, AllowedHosts: opts.AllowedHosts,
		AllowedOrigins: opts.AllowedOrigins}
}

// checkHostOrigin is the DNS-rebinding check: it returns why r is
// refused, or "".
func (h *handler) checkHostOrigin(r *http.Request) string {
	return h.hostOrigin.Check(r.Host, r.Header.Get("Origin"))
}
