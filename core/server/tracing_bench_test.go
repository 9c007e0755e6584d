package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/tracing"
	"github.com/valyala/fasthttp"
)

// BenchmarkSmallRequestTracing is BenchmarkSmallRequest's 2026-07-28
// requests with tracing off (no Provider: the default) and on (sampler
// always_on, the SDK's batch processor into an exporter that drops the
// spans, so the cost is making, ending and queueing them), each with a
// client traceparent header. Compare "off" with BenchmarkSmallRequest
// for the cost of the hooks when off, "on" with "off" for the cost of
// tracing a request (docs/tracing.md, bench/RESULTS.md).
func BenchmarkSmallRequestTracing(b *testing.B) {
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	cases := []struct{ name, method, mcpName, params, keyHeader string }{
		{"read4KiB", "resources/read", "blob:///bench/4k.bin", `{"uri":"blob:///bench/4k.bin",` + modern + `}`, ""},
		{"stat_blob", "tools/call", "stat_blob", `{"name":"stat_blob","arguments":{"key":"bench/4k.bin"},` + modern + `}`, "bench/4k.bin"},
	}
	for _, mode := range []string{"off", "on"} {
		srv := tracingBenchServer(b, mode == "on")
		for _, tc := range cases {
			b.Run(mode+"/"+tc.name, func(b *testing.B) {
				body := []byte(`{"jsonrpc":"2.0","id":7,"method":"` + tc.method + `","params":` + tc.params + `}`)
				var req fasthttp.Request
				req.Header.SetMethod("POST")
				req.SetRequestURI("http://127.0.0.1/mcp")
				req.Header.SetContentType("application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", tc.method)
				req.Header.Set("Mcp-Name", tc.mcpName)
				req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
				if tc.keyHeader != "" {
					req.Header.Set("Mcp-Param-Blob-Key", tc.keyHeader)
				}
				req.SetBody(body)
				if out := benchServe(srv, &req); !bytes.Contains(out, []byte(`"result"`)) {
					b.Fatalf("unexpected answer:\n%s", out)
				}
				var ctx fasthttp.RequestCtx
				w := bufio.NewWriterSize(io.Discard, 16<<10)
				b.ReportAllocs()
				for b.Loop() {
					benchInit(&ctx, &req)
					srv.front.Handler()(&ctx)
					if err := ctx.Response.Write(w); err != nil {
						b.Fatal(err)
					}
					ctx.Response.Reset()
				}
			})
		}
	}
}

// tracingBenchServer is BenchmarkSmallRequest's server, traced or not.
func tracingBenchServer(b *testing.B, traced bool) *Server {
	be := newMemBackend()
	be.put("bench/4k.bin", "application/octet-stream", bytes.Repeat([]byte{0xA5}, 4096))
	opts := Options{Backend: be, Front: front.Options{Listen: "127.0.0.1:0"}}
	if traced {
		tp := tracing.New(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		opts.Tracing = tp
	}
	srv, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	return srv
}
