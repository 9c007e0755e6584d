package front

import (
	"bytes"
	"io"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/bodystream"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// The path of an /mcp request: handle (front.go) calls serveMCP, which
// admits it (Host and Origin, then the caller), takes an upload slot for a
// large body, hands the request to core/mcp over the adapters below and
// deals with what is left of the body.

func (s *Server) serveMCP(ctx *fasthttp.RequestCtx) {
	caller, ok := s.gate.AdmitMCP(ctx) // Host, Origin, credential
	if !ok {
		return
	}
	body, paced, release, ok := s.mcpBody(ctx, caller.Principal)
	if !ok {
		return
	}
	defer release()
	rec := telemetry.Of(ctx)
	req := &mcp.Request{
		Method:    string(ctx.Method()),
		Header:    headerAdapter{&ctx.Request.Header},
		Principal: caller.Principal,
		Scopes:    caller.Scopes,
		Audience:  caller.Audience,
		// The notification streams the request opens end with its
		// credential: at the token's expiry, or once a key reload drops
		// the key.
		CredentialExpires: caller.Expires,
		CredentialValid:   caller.StillValid,
		Body:              body,
		Note:              &rec.MCP,
		Context:           rec.Context(),
	}
	s.mcp.ServeMCP(req, &responseAdapter{ctx: ctx, timeout: s.opts.WriteTimeout, tel: s.tel})
	if paced != nil {
		s.finishMCPBody(ctx, paced)
	}
}

// mcpBody returns the body of an /mcp request of principal: nil when there
// is none. It streams (fasthttp reads ahead at most 8 KiB), and core/mcp
// scans it: data-URI strings go to storage or a spool as they arrive,
// bounded by their x-mcp-file maxSize (default 1 GiB); the rest is held up
// to MaxBodyBytes (413 beyond). A body over gate.UploadThreshold or of
// unknown length is an upload and needs a slot while it arrives (release
// returns it); every streamed body is read under the rate rule (paced).
// On refusal it has answered and reports !ok.
func (s *Server) mcpBody(ctx *fasthttp.RequestCtx, principal string) (body io.Reader, paced *pace.Reader, release func(), ok bool) {
	release = func() {}
	if ctx.RequestBodyStream() == nil {
		if b := ctx.Request.Body(); len(b) > 0 {
			body = bytes.NewReader(b)
		}
		return body, nil, release, true
	}
	if cl := ctx.Request.Header.ContentLength(); string(ctx.Method()) == http.MethodPost && (cl == -1 || cl > gate.UploadThreshold) {
		if release, ok = s.gate.TakeUploadSlot(ctx, principal, true); !ok {
			return nil, nil, nil, false
		}
	}
	paced = s.gate.Paced(ctx)
	return paced, paced, release, true
}

// finishMCPBody deals with what is left of an MCP request body once the
// response is set: a body cut off by the rate rule gets 408; a moderately
// oversized one (413) is read so the client sees the answer; any other
// body not read to its end is read to its end when short, else the
// connection closes (its rest must not be taken for the next request).
func (s *Server) finishMCPBody(ctx *fasthttp.RequestCtx, body *pace.Reader) {
	switch {
	case body.Expired:
		ctx.Response.Reset()
		gate.JSONError(ctx, http.StatusRequestTimeout, mcp.CodeTransport, "Request Timeout: the request body arrived slower than the minimum rate")
		ctx.SetConnectionClose()
	case ctx.Response.StatusCode() == http.StatusRequestEntityTooLarge:
		// Let a moderately oversized upload finish so the client reads
		// the 413 instead of a connection reset; beyond that, hang up.
		_, _ = io.CopyN(io.Discard, body, gate.DrainLimit)
		ctx.SetConnectionClose()
	case !body.EOF && ctx.Request.Header.ContentLength() != 0:
		// A refusal midway (nesting too deep, a bad member): read a
		// bounded rest under the rate rule, so a pipelined request after
		// it is answered and the client is not reset before it reads the
		// answer; a longer rest closes the connection.
		if n, _ := io.CopyN(io.Discard, body, refusedDrain); n == refusedDrain || !body.EOF {
			ctx.SetConnectionClose()
		}
	}
}

// refusedDrain bounds the rest of a refused MCP body read after the answer.
const refusedDrain = 1 << 20

type headerAdapter struct{ h *fasthttp.RequestHeader }

func (a headerAdapter) Get(name string) string { return string(a.h.Peek(name)) }

// responseAdapter is the mcp.ResponseWriter over a fasthttp response.
type responseAdapter struct {
	ctx     *fasthttp.RequestCtx
	timeout time.Duration
	tel     *telemetry.Tracker
}

func (r *responseAdapter) SetStatus(code int)           { r.ctx.SetStatusCode(code) }
func (r *responseAdapter) SetHeader(name, value string) { r.ctx.Response.Header.Set(name, value) }
func (r *responseAdapter) SetBody(b []byte)             { r.ctx.Response.SetBodyRaw(b) } // b is the writer's now: no copy

func (r *responseAdapter) SetBodyStream(size int64, write func(mcp.StreamWriter) error) {
	bs := bodystream.New(write, r.ctx.Conn(), r.timeout)
	if size > int64(^uint(0)>>1) {
		size = -1
	}
	r.ctx.Response.SetBodyStream(bodystream.Count(bs), int(size)) // counted: the access log's bytes_out
}
