package gate

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// The front applies core/mcp/hostorigin's rule to what fasthttp parsed:
// the Host and the Origin header of the request, and the gate's
// configuration. A Host with an unclosed IPv6 bracket was served on a
// loopback node before the rule was shared (the lone "[" was trimmed).
func TestCheckHostOrigin(t *testing.T) {
	for _, tc := range []struct {
		name         string
		g            Gate
		host, origin string
		want         string
	}{
		{"loopback", Gate{Loopback: true}, "127.0.0.1:8080", "http://localhost:3000", ""},
		{"loopback, unclosed bracket", Gate{Loopback: true}, "[::1", "", "Host is not a localhost name"},
		{"loopback, trailing dot", Gate{Loopback: true}, "localhost.", "", "Host is not a localhost name"},
		{"loopback, evil origin", Gate{Loopback: true}, "localhost", "http://evil.example", "Origin is not a localhost origin"},
		{"loopback ignores AllowedHosts", Gate{Loopback: true, AllowedHosts: []string{"mcp.example"}}, "mcp.example", "",
			"Host is not a localhost name"},
		{"listed host", Gate{AllowedHosts: []string{"mcp.example"}}, "mcp.example:443", "https://mcp.example:443", ""},
		{"unlisted host", Gate{AllowedHosts: []string{"mcp.example"}}, "evil.example", "", "Host is not allowed"},
		{"listed origin", Gate{AllowedOrigins: []string{"https://app.example"}}, "mcp.example", "https://app.example", ""},
		{"cross origin", Gate{}, "mcp.example", "https://evil.example", "Origin is not allowed"},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetHost(tc.host)
		if tc.origin != "" {
			ctx.Request.Header.Set("Origin", tc.origin)
		}
		if got := tc.g.CheckHostOrigin(&ctx); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestHostOnly(t *testing.T) {
	for in, want := range map[string]string{"dl.example:8080": "dl.example", "[::1]:80": "::1", "dl.example": "dl.example", "[::1": ""} {
		if got := HostOnly(in); got != want {
			t.Errorf("HostOnly(%q) = %q, want %q", in, got, want)
		}
	}
}
