package telemetry

import (
	"context"
	"log/slog"
	"testing"

	"github.com/mcpblob/mcpblob/core/metrics"
)

func TestRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/mcp": RouteMCP, "/v1/blobs": RouteBlobs, "/v1/blobs/a/b.txt": RouteBlob, "/v1/links": RouteLinks,
		"/v1/uploads": RouteUploads, "/v1/x": RouteV1Other, "/d/tok": RouteDownload, "/u/tok": RouteUpload,
		"/upload/tok": RouteUploadPage, "/.well-known/oauth-protected-resource/mcp": RouteOAuthMetadata,
		"/oauth/callback": RouteOAuthCallback, "/healthz": RouteHealthz, "/metrics": RouteMetrics,
		"/secret-key-in-path": RouteOther,
	} {
		if got := Route(path); got != want {
			t.Errorf("Route(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestRequestID(t *testing.T) {
	tr := New(metrics.New(metrics.Build{}), slog.New(slog.DiscardHandler), false)
	if r := tr.Begin("GET", "/mcp", "client-id_1.2:3"); r.ID != "client-id_1.2:3" {
		t.Errorf("a plain client id was replaced: %q", r.ID)
	}
	a, b := tr.Begin("GET", "/mcp", "bad id\n"), tr.Begin("GET", "/mcp", "")
	if a.ID == "bad id\n" || a.ID == b.ID || a.ID == "" {
		t.Errorf("minted ids %q, %q: want fresh, distinct ones for a bad or missing id", a.ID, b.ID)
	}
	if got := RequestID(a.Context()); got != a.ID {
		t.Errorf("the record's context carries %q, want %q", got, a.ID)
	}
	if RequestID(context.Background()) != "" {
		t.Errorf("a bare context carries a request id")
	}
}

// BenchmarkBeginEnd is the telemetry cost of one request without the
// access log: id, route, record, metrics.
func BenchmarkBeginEnd(b *testing.B) {
	tr := New(metrics.New(metrics.Build{}), slog.New(slog.DiscardHandler), false)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := tr.Begin("POST", "/mcp", "")
			r.MCP.Method, r.MCP.Era, r.MCP.Outcome = "resources/read", "2026-07-28", "ok"
			tr.End(r, 200, 5600, 200)
		}
	})
}
