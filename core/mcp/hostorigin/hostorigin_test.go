package hostorigin

import "testing"

// Each case is a Host and Origin pair and the refusal expected ("" when
// served). The comments name the cases where mcpblob's two copies of the
// rule (core/server/gate on fasthttp, core/mcp/mcphttp on net/http)
// disagreed before they shared this package, and which one was wrong.
func TestCheck(t *testing.T) {
	loopback := &Policy{Loopback: true, AllowedOrigins: []string{"https://app.example/"}}
	listed := &Policy{AllowedHosts: []string{"mcp.example"}, AllowedOrigins: []string{"https://app.example"}}
	open := &Policy{}
	for _, tc := range []struct {
		name         string
		p            *Policy
		host, origin string
		want         string
	}{
		{"loopback: localhost", loopback, "localhost:8080", "", ""},
		{"loopback: LOCALHOST", loopback, "LOCALHOST", "", ""},
		{"loopback: 127.0.0.1", loopback, "127.0.0.1:8080", "", ""},
		{"loopback: [::1]", loopback, "[::1]:8080", "", ""},
		{"loopback: [::1] without port", loopback, "[::1]", "", ""},
		{"loopback: foreign host", loopback, "evil.example", "", "Host is not a localhost name"},
		{"loopback: no Host", loopback, "", "", "Host is not a localhost name"},
		{"loopback: localhost.evil.example", loopback, "localhost.evil.example:8080", "", "Host is not a localhost name"},
		// mcphttp stripped a trailing dot and served "localhost.".
		{"loopback: trailing dot", loopback, "localhost.:8080", "", "Host is not a localhost name"},
		// gate trimmed a lone "[" and served "[::1"; mcphttp trimmed
		// every bracket and served "[[::1]]" and "::1]".
		{"loopback: unclosed bracket", loopback, "[::1", "", "Host is not a localhost name"},
		{"loopback: doubled brackets", loopback, "[[::1]]", "", "Host is not a localhost name"},
		{"loopback: stray closing bracket", loopback, "::1]", "", "Host is not a localhost name"},
		{"loopback: unbracketed IPv6", loopback, "::1", "", "Host is not a localhost name"},
		{"loopback: bracketed name", loopback, "[localhost]:80", "", "Host is not a localhost name"},
		{"loopback: bad port", loopback, "localhost:80x", "", "Host is not a localhost name"},
		{"loopback: two ports", loopback, "localhost:80:81", "", "Host is not a localhost name"},
		{"loopback: localhost origin, other port", loopback, "localhost:8080", "http://localhost:3000", ""},
		{"loopback: [::1] origin", loopback, "localhost:8080", "https://[::1]:3000", ""},
		{"loopback: listed origin", loopback, "localhost:8080", "https://APP.example", ""},
		{"loopback: evil origin", loopback, "localhost:8080", "http://evil.example", "Origin is not a localhost origin"},
		{"loopback: localhost.evil.example origin", loopback, "localhost:8080", "http://localhost.evil.example", "Origin is not a localhost origin"},
		{"loopback: trailing-dot origin", loopback, "localhost:8080", "http://localhost.:8080", "Origin is not a localhost origin"},
		{"loopback: null origin", loopback, "localhost:8080", "null", "Origin is not allowed"},
		{"loopback: bare name origin", loopback, "localhost:8080", "evil.example", "Origin is not allowed"},
		{"loopback: file origin", loopback, "localhost:8080", "file://localhost", "Origin is not allowed"},
		{"loopback: origin with user", loopback, "localhost:8080", "http://evil.example@localhost", "Origin is not allowed"},
		{"loopback: origin with path", loopback, "localhost:8080", "http://localhost/x", "Origin is not allowed"},
		{"loopback: origin without host", loopback, "localhost:8080", "http://", "Origin is not allowed"},
		{"listed: host", listed, "MCP.example:443", "", ""},
		{"listed: host without port", listed, "mcp.example", "", ""},
		{"listed: other host", listed, "evil.example", "", "Host is not allowed"},
		{"listed: localhost", listed, "localhost", "", "Host is not allowed"},
		// mcphttp served "mcp.example." under AllowedHosts "mcp.example".
		{"listed: trailing dot", listed, "mcp.example.", "", "Host is not allowed"},
		{"listed: malformed", listed, "[mcp.example]", "", "Host is not allowed"},
		{"listed: same origin", listed, "mcp.example:8443", "https://mcp.example:8443", ""},
		{"listed: listed origin", listed, "mcp.example", "https://app.example", ""},
		{"listed: localhost origin", listed, "mcp.example", "http://localhost:3000", "Origin is not allowed"},
		{"listed: same host, other port", listed, "mcp.example:8443", "https://mcp.example", "Origin is not allowed"},
		{"open: any host", open, "whatever.example", "", ""},
		{"open: same origin", open, "mcp.example", "http://mcp.example", ""},
		{"open: other origin", open, "mcp.example", "http://evil.example", "Origin is not allowed"},
	} {
		if got := tc.p.Check(tc.host, tc.origin); got != tc.want {
			t.Errorf("%s: Check(%q, %q) = %q, want %q", tc.name, tc.host, tc.origin, got, tc.want)
		}
	}
}

func TestHostname(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"example.com", "example.com", true},
		{"example.com:8080", "example.com", true},
		{"example.com:", "example.com", true},
		{"[::1]:8080", "::1", true},
		{"[2001:db8::1]", "2001:db8::1", true},
		{"", "", true},
		{"::1", "", false},
		{"[::1", "", false},
		{"[::1]x", "", false},
		{"[::1]:x", "", false},
		{"[127.0.0.1]", "", false},
		{"a]:80", "", false},
		{"example.com:123456", "", false},
	} {
		got, ok := Hostname(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Hostname(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
