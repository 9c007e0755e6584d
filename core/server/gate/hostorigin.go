package gate

import (
	"net"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// CheckHostOrigin implements DNS-rebinding protection; it returns why a
// request is refused, or "".
func (g *Gate) CheckHostOrigin(ctx *fasthttp.RequestCtx) string {
	host := HostOnly(string(ctx.Host()))
	if g.Loopback {
		if !isLocalName(host) {
			return "Host is not a localhost name"
		}
	} else if len(g.AllowedHosts) > 0 && !containsFold(g.AllowedHosts, host) {
		return "Host is not allowed"
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	if origin == "" {
		return ""
	}
	for _, o := range g.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "Origin is not allowed"
	}
	if g.Loopback {
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

// IsLoopbackHost reports whether h, a host name or IP literal, is a
// loopback address.
func IsLoopbackHost(h string) bool {
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

// HostOnly strips the port from a Host header value.
func HostOnly(hostport string) string {
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
