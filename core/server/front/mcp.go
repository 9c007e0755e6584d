package front

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/bodystream"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// serveMCP serves an /mcp request (handle, front.go, routes it here): the
// gate admits it (every check first, then the body taken once, a refusal
// answered at one point), core/mcp answers it over the adapters below, and
// closing the admission settles what is left of the body and returns the
// upload slot.
//
// The body streams (fasthttp reads ahead at most 8 KiB), and core/mcp
// scans it: data-URI strings go to storage or a spool as they arrive,
// bounded by their x-mcp-file maxSize (default 1 GiB); the rest is held up
// to MaxBodyBytes (413 beyond).
func (s *Server) serveMCP(ctx *fasthttp.RequestCtx) {
	in, ok := s.gate.AdmitMCP(ctx) // Host, Origin, credential, upload slot; the body
	if !ok {
		return // refused, and answered
	}
	defer in.Close(ctx)
	req := &mcp.Request{
		Method:    string(ctx.Method()),
		Header:    headerAdapter{&ctx.Request.Header},
		Principal: in.Principal,
		Scopes:    in.Scopes,
		Audience:  in.Audience,
		// The notification streams the request opens end with its
		// credential: at the token's expiry, or once a key reload drops
		// the key.
		CredentialExpires: in.Expires,
		CredentialValid:   in.StillValid,
		Body:              in.Body,
		Note:              &in.Record.MCP,
		Context:           in.Record.Context(),
	}
	s.mcp.ServeMCP(req, &responseAdapter{ctx: ctx, timeout: s.opts.WriteTimeout, tel: s.tel})
}

type headerAdapter struct{ h *fasthttp.RequestHeader }

// Get returns the value of header name; the values most requests carry
// (media types, protocol versions, MCP methods) are constants, not copies.
func (a headerAdapter) Get(name string) string {
	v := a.h.Peek(name)
	if s := commonHeaderValue(v); s != "" {
		return s
	}
	return string(v)
}

// Has reports whether header name is present and not empty, without a
// copy of its value.
func (a headerAdapter) Has(name string) bool { return len(a.h.Peek(name)) > 0 }

// commonHeaderValue returns the constant equal to v, or "" when v is not
// one of the values clients send on nearly every MCP request.
func commonHeaderValue(v []byte) string {
	switch string(v) { // compiled to comparisons: no conversion is made
	case "application/json":
		return "application/json"
	case "application/json, text/event-stream":
		return "application/json, text/event-stream"
	case "text/event-stream, application/json":
		return "text/event-stream, application/json"
	case "2025-11-25":
		return "2025-11-25"
	case "2025-06-18":
		return "2025-06-18"
	case "2025-03-26":
		return "2025-03-26"
	case "2026-07-28":
		return "2026-07-28"
	case "resources/read":
		return "resources/read"
	case "tools/list":
		return "tools/list"
	case "tools/call":
		return "tools/call"
	}
	return ""
}

// responseAdapter is the mcp.ResponseWriter over a fasthttp response.
type responseAdapter struct {
	ctx     *fasthttp.RequestCtx
	timeout time.Duration
	tel     *telemetry.Tracker
}

func (r *responseAdapter) SetStatus(code int)           { r.ctx.SetStatusCode(code) }
func (r *responseAdapter) SetHeader(name, value string) { r.ctx.Response.Header.Set(name, value) }
func (r *responseAdapter) SetBody(b []byte)             { r.ctx.Response.SetBodyRaw(b) } // b is the writer's now: no copy

var _ mcp.PartsWriter = (*responseAdapter)(nil)

// SetBodyParts implements mcp.PartsWriter: the parts are copied into the
// response's body buffer, which fasthttp takes from a pool and gives back
// once the response is written.
func (r *responseAdapter) SetBodyParts(head, middle, tail []byte) {
	r.ctx.Response.ResetBody()
	r.ctx.Response.AppendBody(head)
	r.ctx.Response.AppendBody(middle)
	r.ctx.Response.AppendBody(tail)
}

func (r *responseAdapter) SetBodyStream(size int64, write func(mcp.StreamWriter) error) {
	bs := bodystream.NewCounted(write, r.ctx.Conn(), r.timeout)
	if size > int64(^uint(0)>>1) {
		size = -1
	}
	r.ctx.Response.SetBodyStream(bs, int(size)) // counted: the access log's bytes_out
}
