package gate

import (
	"net"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/hostorigin"
	"github.com/valyala/fasthttp"
)

// CheckHostOrigin implements DNS-rebinding protection with the rule
// core/mcp/mcphttp applies too (package hostorigin); it returns why a
// request is refused, or "".
func (g *Gate) CheckHostOrigin(ctx *fasthttp.RequestCtx) string {
	p := hostorigin.Policy{Loopback: g.Loopback, AllowedHosts: g.AllowedHosts, AllowedOrigins: g.AllowedOrigins}
	return p.Check(string(ctx.Host()), string(ctx.Request.Header.Peek("Origin")))
}

// IsLoopbackHost reports whether h, a host name or IP literal, is a
// loopback address.
func IsLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// HostOnly is the name of a Host header value, without its port or an
// IPv6 literal's brackets ("" when the value is malformed).
func HostOnly(hostport string) string {
	name, _ := hostorigin.Hostname(hostport)
	return name
}
