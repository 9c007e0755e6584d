package front

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/bodystream"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// The gateway's routes (`serve --upstream`, package core/gateway): /mcp is
// relayed to the upstream instead of core/mcp, after the same admission
// (Host, Origin, the caller), body rules (upload slot, rate rule, size)
// and body ending as serveMCP's; /g/{token} serves the gateway's own
// resources/stream downloadUrls. The gateway is transport-neutral; this
// file adapts fasthttp to it.

// routeGateway serves path when the server is a gateway and the path is
// one of its routes.
func (s *Server) routeGateway(ctx *fasthttp.RequestCtx, path string) bool {
	gw := s.env.Gateway
	switch {
	case gw == nil, path == "/mcp" && ownFilesMethod(ctx):
		return false
	case path == "/mcp":
		s.serveGateway(ctx, gw)
	case strings.HasPrefix(path, gateway.DownloadPrefix):
		s.gate.DrainSmall(ctx)
		gw.ServeDownload(s.gatewayRequest(ctx, nil, ""), strings.TrimPrefix(path, gateway.DownloadPrefix),
			&gatewayResponse{ctx: ctx, timeout: s.opts.WriteTimeout, tel: s.tel})
	default:
		return false
	}
	return true
}

// ownFilesMethod reports a sessionless (2026-07-28) request of an SEP-2631
// files/* method: the gateway serves it itself, through core/mcp and
// core/blobs on its own store (docs/gateway.md, "Uploaded files to inline
// upstreams"), its files' URIs expanded for the upstream by the gateway.
func ownFilesMethod(ctx *fasthttp.RequestCtx) bool {
	return bytes.HasPrefix(ctx.Request.Header.Peek("Mcp-Method"), []byte("files/")) &&
		len(ctx.Request.Header.Peek("Mcp-Session-Id")) == 0
}

func (s *Server) serveGateway(ctx *fasthttp.RequestCtx, gw *gateway.Gateway) {
	in, ok := s.gate.AdmitMCP(ctx) // as serveMCP: every check, then the body once
	if !ok {
		return // refused, and answered
	}
	defer in.Close(ctx)
	gw.ServeMCP(s.gatewayRequest(ctx, in.Body, in.Principal), &gatewayResponse{ctx: ctx, timeout: s.opts.WriteTimeout, tel: s.tel})
}

// gatewayRequest is the gateway's view of the request: its headers copied
// (the gateway sends them on), its body (nil for none) as a reader.
func (s *Server) gatewayRequest(ctx *fasthttp.RequestCtx, body io.Reader, principal string) *gateway.Request {
	r := &gateway.Request{Method: string(ctx.Method()), Header: gatewayHeader(&ctx.Request.Header),
		ContentLength: int64(gate.BodyLength(&ctx.Request.Header)), // -1: chunked
		Principal:     principal, Context: telemetry.Of(ctx).Context()}
	if body != nil && ctx.IsPost() {
		r.Body = body
	}
	return r
}

// gatewayHeader copies rh's headers (as http.Header's Add would) into one
// string the names and values are cut from, the values sharing one
// slice: three allocations, not two strings and a slice per header, and
// one walk over rh.
func gatewayHeader(rh *fasthttp.RequestHeader) http.Header {
	var bytesOnStack [2 << 10]byte
	var lensOnStack [64]int
	buf, lens := bytesOnStack[:0], lensOnStack[:0] // each header's name and value lengths
	for k, v := range rh.All() {
		buf = append(append(buf, k...), v...)
		lens = append(lens, len(k), len(v))
	}
	all := string(buf)
	n := len(lens) / 2
	h := make(http.Header, n)
	values := make([]string, n)
	at := 0
	for i := range n {
		kn, vn := lens[2*i], lens[2*i+1]
		name := http.CanonicalHeaderKey(all[at : at+kn])
		values[i] = all[at+kn : at+kn+vn]
		at += kn + vn
		if vs, ok := h[name]; ok {
			h[name] = append(vs, values[i])
		} else {
			h[name] = values[i : i+1 : i+1]
		}
	}
	return h
}

// gatewayResponse is the gateway's ResponseWriter over a fasthttp
// response.
type gatewayResponse struct {
	ctx       *fasthttp.RequestCtx
	timeout   time.Duration
	tel       *telemetry.Tracker
	withFirst bool // an event stream's headers go with its first bytes
}

func (r *gatewayResponse) SetStatus(code int)           { r.ctx.SetStatusCode(code) }
func (r *gatewayResponse) AddHeader(name, value string) { r.ctx.Response.Header.Add(name, value) }
func (r *gatewayResponse) SetBody(b []byte)             { r.ctx.Response.SetBodyRaw(b) }
func (r *gatewayResponse) HeadersWithFirstBytes()       { r.withFirst = true }

// SetBodyCopy copies b into the response's own (pooled) body buffer: the
// gateway's pooled buffer is free again when it returns.
func (r *gatewayResponse) SetBodyCopy(b []byte) { r.ctx.Response.SetBody(b) }

// SetBodyStream streams write's body through bodystream (per-write
// deadlines, counted for the access log), as core/mcp's bodies go. An
// open event stream (no length) has its status and headers sent before
// write runs: fasthttp holds them with a chunked body until the first
// chunk, and the gateway's Flush before its first write (the upstream's
// headers relayed at once) cannot push them there. When the gateway holds
// the first bytes already (HeadersWithFirstBytes), the headers go with
// them, in one write.
func (r *gatewayResponse) SetBodyStream(size int64, write func(gateway.StreamWriter) error) {
	bs := bodystream.New(func(w mcp.StreamWriter) error { return write(w) }, r.ctx.Conn(), r.timeout)
	if size > int64(^uint(0)>>1) {
		size = -1
	}
	if size < 0 && !r.withFirst && isEventStream(r.ctx.Response.Header.ContentType()) {
		r.ctx.Response.ImmediateHeaderFlush = true
	}
	r.ctx.Response.SetBodyStream(bodystream.Count(bs), int(size))
}

// isEventStream reports whether contentType is text/event-stream.
func isEventStream(contentType []byte) bool {
	mt, _, _ := strings.Cut(string(contentType), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}
