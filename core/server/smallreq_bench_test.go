package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/telemetry/logbuf"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
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
	benchSmallRequests(b, srv, benchCases, benchConn{})
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

// BenchmarkSmallRequestLocal is BenchmarkSmallRequest on the server as
// `mcpblob serve` runs it: a local store (so the 2025-11-25 session is
// checked against its record in the store's claims on every request, and
// the blob is a file), and the access log on, formatted into a discarding
// writer. Only the socket is missing.
func BenchmarkSmallRequestLocal(b *testing.B) {
	st, err := localfs.Open(b.TempDir(), localfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w, err := st.Create(context.Background(), "bench/4k.bin", storage.CreateOptions{MediaType: "application/octet-stream"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte{0xA5}, 4096)); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Commit(context.Background()); err != nil {
		b.Fatal(err)
	}
	logs := logbuf.New(io.Discard, 64<<10, time.Hour)
	log := slog.New(logbuf.TextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := New(Options{Backend: st, Logger: log, Front: front.Options{Listen: "127.0.0.1:0", AccessLog: true}})
	if err != nil {
		b.Fatal(err)
	}
	benchSmallRequests(b, srv, benchCases[:3], loopbackConn(b))
}

// loopbackConn is the server's end of a loopback TCP connection, so that the
// handler's write deadlines cost what they cost on a socket; nothing is
// written to it.
func loopbackConn(b *testing.B) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	conn, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn
}

// benchCase is one small request of BenchmarkSmallRequest.
type benchCase struct {
	name, method, mcpName, params string
	legacy                        bool
	header                        [][2]string
}

var benchModern = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

var benchCases = []benchCase{
	{"read4KiB/2025-11-25", "resources/read", "", `{"uri":"blob:///bench/4k.bin"}`, true, nil},
	{"read4KiB/2026-07-28", "resources/read", "blob:///bench/4k.bin", `{"uri":"blob:///bench/4k.bin",` + benchModern + `}`, false, nil},
	{"tools_list/2025-11-25", "tools/list", "", `{}`, true, nil},
	{"stat_blob/2025-11-25", "tools/call", "", `{"name":"stat_blob","arguments":{"key":"bench/4k.bin"}}`, true, nil},
	{"stat_blob/2026-07-28", "tools/call", "stat_blob", `{"name":"stat_blob","arguments":{"key":"bench/4k.bin"},` + benchModern + `}`, false,
		[][2]string{{"Mcp-Param-Blob-Key", "bench/4k.bin"}}},
}

// benchSmallRequests runs each case through srv's handler in a loop, the
// response serialised into a discarding writer; conn is the connection
// the handler sees.
func benchSmallRequests(b *testing.B, srv *Server, cases []benchCase, conn net.Conn) {
	sid := benchSession(b, srv)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			req := benchRequest(tc, sid)
			// Check the answer once, outside the timed loop.
			if out := benchServe(srv, req); !bytes.Contains(out, []byte(`"result"`)) || !bytes.Contains(out, []byte("200 OK")) {
				b.Fatalf("unexpected answer:\n%s", out)
			}
			var ctx fasthttp.RequestCtx
			w := bufio.NewWriterSize(io.Discard, 16<<10)
			b.ReportAllocs()
			b.SetBytes(int64(len(req.Body())))
			for b.Loop() {
				ctx.Init2(conn, nil, false)
				req.CopyTo(&ctx.Request)
				srv.front.Handler()(&ctx)
				if err := ctx.Response.Write(w); err != nil {
					b.Fatal(err)
				}
				ctx.Response.Reset()
			}
		})
	}
}

// benchRequest is tc's request, in session sid when tc is a 2025-11-25 one.
func benchRequest(tc benchCase, sid string) *fasthttp.Request {
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
	req.SetBody([]byte(`{"jsonrpc":"2.0","id":7,"method":"` + tc.method + `","params":` + tc.params + `}`))
	return &req
}
