package mcphttp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// loopbackNames are the Host names served by default.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// checkHostOrigin is the DNS-rebinding check: it returns why r is
// refused, or "".
func (h *handler) checkHostOrigin(r *http.Request) string {
	if !containsFold(h.opts.AllowedHosts, hostOnly(r.Host)) {
		return "Host is not allowed"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	for _, o := range h.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "Origin is not allowed"
	}
	if h.loopback && containsFold(loopbackNames, strings.Trim(u.Hostname(), "[]")) {
		return ""
	}
	if strings.EqualFold(u.Host, r.Host) {
		return "" // same origin
	}
	return "Origin is not allowed"
}

// hostOnly strips the port (and an IPv6 literal's brackets) from a Host
// header value, and a trailing dot from a name.
func hostOnly(hostport string) string {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = hostport
	}
	return strings.TrimSuffix(strings.Trim(h, "[]"), ".")
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
