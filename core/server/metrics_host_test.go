package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsRebinding: an open loopback node's /metrics gets the
// DNS-rebinding check /mcp and /v1 get. 71946bf answered a Host of
// attacker.example 200 with the counters while /v1 answered 403.
func TestMetricsRebinding(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{})
	port := base[strings.LastIndexByte(base, ':')+1:]
	get := func(path, host, origin string) (int, string) {
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "localhost"} {
		if status, _ := get("/metrics", host, ""); status != http.StatusOK {
			t.Errorf("GET /metrics with Host %s: %d, want 200", host, status)
		}
	}
	for _, tc := range []struct{ host, origin string }{
		{"attacker.example:" + port, ""},
		{"attacker.example", ""},
		{"127.0.0.1.attacker.example:" + port, ""},
		{"127.0.0.1:" + port, "http://attacker.example"},
		{"localhost:" + port, "null"},
	} {
		status, body := get("/metrics", tc.host, tc.origin)
		if status != http.StatusForbidden || !strings.Contains(body, `"code":"forbidden"`) || strings.Contains(body, "mcpblob_") {
			t.Errorf("GET /metrics with Host %s, Origin %q: %d %.200s; want 403 forbidden without metrics", tc.host, tc.origin, status, body)
		}
		if v1, _ := get("/v1/blobs", tc.host, tc.origin); v1 != http.StatusForbidden {
			t.Errorf("GET /v1/blobs with Host %s, Origin %q: %d; the check /metrics follows answers 403", tc.host, tc.origin, v1)
		}
	}
}
