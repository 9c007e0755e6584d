package hostorigin

import (
	"net"
	"strings"
)

// Policy is the Host and Origin rule of one server. Its fields do not
// change once serving.
type Policy struct {
	// Loopback: the server listens on a loopback address, so Host must be
	// a localhost name (localhost, 127.0.0.1 or [::1], any port), and an
	// Origin, when sent and not in AllowedOrigins, a localhost origin (http
	// or https, any port). AllowedHosts is not consulted.
	Loopback bool
	// AllowedHosts, when not Loopback, lists the host names served (any
	// port, case-insensitive, otherwise as written: list "name." too to
	// serve a fully qualified name with its trailing dot); empty: any
	// Host. An Origin, when sent, must then be in AllowedOrigins or the
	// request's own origin.
	AllowedHosts []string
	// AllowedOrigins lists extra acceptable Origin values
	// ("https://app.example.com"; case-insensitive, a trailing slash
	// ignored).
	AllowedOrigins []string
}

// Check returns why a request with the Host header value host and the
// Origin header value origin ("" when absent) is refused, or "" when it
// is served.
func (p *Policy) Check(host, origin string) string {
	if why := p.checkHost(host); why != "" {
		return why
	}
	return p.checkOrigin(host, origin)
}

func (p *Policy) checkHost(host string) string {
	switch {
	case p.Loopback:
		if name, ok := Hostname(host); !ok || !IsLocalName(name) {
			return "Host is not a localhost name"
		}
	case len(p.AllowedHosts) > 0:
		if name, ok := Hostname(host); !ok || !containsFold(p.AllowedHosts, name) {
			return "Host is not allowed"
		}
	}
	return ""
}

func (p *Policy) checkOrigin(host, origin string) string {
	if origin == "" {
		return ""
	}
	for _, o := range p.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	hostport, ok := originHost(origin)
	if !ok {
		return "Origin is not allowed"
	}
	if p.Loopback {
		if name, _ := Hostname(hostport); IsLocalName(name) {
			return ""
		}
		return "Origin is not a localhost origin"
	}
	if strings.EqualFold(hostport, host) {
		return "" // same origin
	}
	return "Origin is not allowed"
}

// originHost returns the host[:port] of a serialized origin
// ("https://app.example.com:8443"), and whether origin is one: scheme
// http or https, a well-formed host, and nothing else (no user, path,
// query or fragment; "null" is not an origin a server can trust).
func originHost(origin string) (string, bool) {
	scheme, hostport, ok := strings.Cut(origin, "://")
	if !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return "", false
	}
	if strings.ContainsAny(hostport, "/?#@\\") {
		return "", false
	}
	if name, ok := Hostname(hostport); !ok || name == "" {
		return "", false
	}
	return hostport, true
}

// Hostname returns the host name of a Host header value (or an origin's
// host[:port]) without its port, an IPv6 literal without its brackets,
// and whether the value is well formed: "name", "name:port",
// "[IPv6]" or "[IPv6]:port", the port decimal digits. An unbracketed
// IPv6 address, stray brackets or a second colon are malformed.
func Hostname(hostport string) (string, bool) {
	if rest, ok := strings.CutPrefix(hostport, "["); ok {
		name, after, ok := strings.Cut(rest, "]")
		if !ok || !strings.Contains(name, ":") || net.ParseIP(name) == nil {
			return "", false
		}
		if after != "" && (after[0] != ':' || !isPort(after[1:])) {
			return "", false
		}
		return name, true
	}
	name, port, hasPort := strings.Cut(hostport, ":")
	if hasPort && !isPort(port) || strings.ContainsAny(name, "[]") {
		return "", false
	}
	return name, true
}

// isPort reports whether s is a port: decimal digits (RFC 3986 allows
// none).
func isPort(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) <= 5
}

// IsLocalName reports whether name, a Host name without port or brackets,
// is one of the localhost names a loopback server answers to.
func IsLocalName(name string) bool {
	return strings.EqualFold(name, "localhost") || name == "127.0.0.1" || name == "::1"
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
