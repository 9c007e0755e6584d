package metrics

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestExposition(t *testing.T) {
	s := New(Build{Version: "v1", Go: "go1", CodecEncode: "e", CodecDecode: "d", JSONScan: "j"})
	s.Request("mcp", "POST", 200, 3*time.Millisecond)
	s.Request("mcp", "BREW", 200, time.Millisecond)
	s.MCP("tools/list", "2026-07-28", "ok")
	s.Sent(PlaneDownload, 10)
	s.Sent("nonsense", 5)
	s.Upload("control", "ok")
	s.Storage("localfs", "stat", "not_found", time.Microsecond)
	done := s.Open(StreamDownload)
	s.StreamSource(StreamSSE, func() float64 { return 2 })
	var b bytes.Buffer
	s.WritePrometheus(&b)
	out := b.String()
	for _, want := range []string{
		`mcpblob_http_requests_total{route="mcp",method="POST",code="200"} 1`,
		`mcpblob_http_requests_total{route="mcp",method="OTHER",code="200"} 1`,
		`mcpblob_http_request_duration_seconds_count{route="mcp"} 2`,
		`mcpblob_http_request_duration_seconds_bucket{route="mcp",le="0.005"} 2`,
		`mcpblob_http_request_duration_seconds_bucket{route="mcp",le="0.001"} 1`,
		`mcpblob_mcp_requests_total{method="tools/list",era="2026-07-28",outcome="ok"} 1`,
		`mcpblob_bytes_sent_total{plane="download"} 10`,
		`mcpblob_bytes_sent_total{plane="control"} 5`,
		`mcpblob_uploads_total{surface="control",outcome="ok"} 1`,
		`mcpblob_storage_operations_total{backend="localfs",op="stat",outcome="not_found"} 1`,
		`mcpblob_active_streams{kind="download"} 1`,
		`mcpblob_active_streams{kind="sse"} 2`,
		`mcpblob_build_info{version="v1",go="go1",codec_encode="e",codec_decode="d",json_scan="j"} 1`,
		"# TYPE mcpblob_http_requests_total counter",
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(out, want+"\n") && !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	done()
	done()
	b.Reset()
	s.WritePrometheus(&b)
	if !strings.Contains(b.String(), `mcpblob_active_streams{kind="download"} 0`) {
		t.Errorf("a stream ended twice did not count down exactly once")
	}
}

// BenchmarkRequest is the metrics cost of one request: its HTTP count and
// duration, its MCP count and its bytes on two planes.
func BenchmarkRequest(b *testing.B) {
	s := New(Build{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.Request("mcp", "POST", 200, 150*time.Microsecond)
			s.MCP("resources/read", "2026-07-28", "ok")
			s.Sent(PlaneMCPRead, 5600)
			s.Received(PlaneControl, 200)
		}
	})
}

// BenchmarkStorage is the metrics cost of one storage operation.
func BenchmarkStorage(b *testing.B) {
	s := New(Build{})
	b.ReportAllocs()
	for b.Loop() {
		s.Storage("localfs", "stat", "ok", time.Microsecond)
	}
}

func TestGatewayFamilies(t *testing.T) {
	s := New(Build{})
	s.Upstream("ok", 3*time.Millisecond)
	s.Upstream("timeout", 0)
	s.Relayed("to_client", 100)
	s.Relayed("to_client", 20)
	s.Relayed("decoded", 0)
	var b strings.Builder
	s.WritePrometheus(&b)
	for _, want := range []string{`mcpblob_gateway_upstream_requests_total{outcome="ok"} 1`,
		`mcpblob_gateway_upstream_requests_total{outcome="timeout"} 1`,
		`mcpblob_gateway_upstream_duration_seconds_count 1`, `mcpblob_gateway_bytes_total{direction="to_client"} 120`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if strings.Contains(b.String(), `direction="decoded"`) {
		t.Error("a zero add made a series")
	}
}
