package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/valyala/fasthttp"
)

// BenchmarkSmallRequest measures the server's own cost of the small
// requests that dominate a busy MCP endpoint: a resources/read of a 4 KiB
// blob and a tools/call stat_blob, in both protocol eras. The request goes
// through the whole handler (host check, era detection, scanner, router,
// result writer) and the response, streamed body included, is serialised
// into a discarding writer: no sockets, no client, so ns/op and allocs/op
// are the server's alone. Compare runs with benchstat (-count 10).
func BenchmarkSmallRequest(b *testing.B) {
	be := newMemBackend()
	be.put("bench/4k.bin", "application/octet-stream", bytes.Repeat([]byte{0xA5}, 4096))
	srv, err := New(Options{Backend: be, Front: front.Options{Listen: "127.0.0.1:0"}})
	if err != nil {
		b.Fatal(err)
	}
	sid := benchSession(b, srv)
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	cases := []struct {
		name, method, mcpName, params string
		legacy                        bool
		header                        [][2]string
	}{
		{"read4KiB/2025-11-25", "resources/read", "", `{"uri":"blob:///bench/4k.bin"}`, true, nil},
		{"read4KiB/2026-07-28", "resources/read", "blob:///bench/4k.bin", `{"uri":"blob:///bench/4k.bin",` + modern + `}`, false, nil},
		{"tools_list/2025-11-25", "tools/list", "", `{}`, true, nil},
		{"stat_blob/2025-11-25", "tools/call", "", `{"name":"stat_blob","arguments":{"key":"bench/4k.bin"}}`, true, nil},
		{"stat_blob/2026-07-28", "tools/call", "stat_blob", `{"name":"stat_blob","arguments":{"key":"bench/4k.bin"},` + modern + `}`, false,
			[][2]string{{"Mcp-Param-Blob-Key", "bench/4k.bin"}}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			body := []byte(`{"jsonrpc":"2.0","id":7,"method":"` + tc.method + `","params":` + tc.params + `}`)
			var req fasthttp.Request
			req.Header.SetMethod("POST")
			req.SetRequestURI("http://127.0.0.1/mcp")
			req.Header.SetContentType("application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.legacy {
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			} else {
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", tc.method)
				req.Header.Set("Mcp-Name", tc.mcpName)
			}
			for _, h := range tc.header {
				req.Header.Set(h[0], h[1])
			}
			req.SetBody(body)
			// Check the answer once, outside the timed loop.
			if out := benchServe(srv, &req); !bytes.Contains(out, []byte(`"result"`)) || !bytes.Contains(out, []byte("200 OK")) {
				b.Fatalf("unexpected answer:\n%s", out)
			}
			var ctx fasthttp.RequestCtx
			w := bufio.NewWriterSize(io.Discard, 16<<10)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
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

// benchServe runs one request through the handler and returns the response
// as it would go on the wire.
func benchServe(srv *Server, req *fasthttp.Request) []byte {
	var ctx fasthttp.RequestCtx
	benchInit(&ctx, req)
	srv.front.Handler()(&ctx)
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := ctx.Response.Write(w); err != nil {
		out.WriteString("\nwrite error: " + err.Error())
	}
	_ = w.Flush()
	return out.Bytes()
}

// benchSession opens a 2025-11-25 session and returns its id.
func benchSession(b *testing.B, srv *Server) string {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("http://127.0.0.1/mcp")
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.SetBody([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"` + strconv.Itoa(1) + `"}}}`))
	var ctx fasthttp.RequestCtx
	benchInit(&ctx, &req)
	srv.front.Handler()(&ctx)
	sid := string(ctx.Response.Header.Peek("Mcp-Session-Id"))
	if sid == "" {
		b.Fatalf("initialize gave no session: %s", ctx.Response.Body())
	}
	return sid
}

// benchInit readies ctx for req on a connection that accepts deadlines and
// discards nothing (the handler never touches it but for write deadlines).
func benchInit(ctx *fasthttp.RequestCtx, req *fasthttp.Request) {
	ctx.Init2(benchConn{}, nil, false)
	req.CopyTo(&ctx.Request)
}

// benchConn is the connection of benchmark requests: loopback addresses and
// deadlines that are accepted and ignored.
type benchConn struct{ net.Conn }

var benchAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

func (benchConn) LocalAddr() net.Addr              { return benchAddr }
func (benchConn) RemoteAddr() net.Addr             { return benchAddr }
func (benchConn) SetDeadline(time.Time) error      { return nil }
func (benchConn) SetReadDeadline(time.Time) error  { return nil }
func (benchConn) SetWriteDeadline(time.Time) error { return nil }
