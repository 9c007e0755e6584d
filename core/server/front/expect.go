package front

import (
	"net/http"

	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/valyala/fasthttp"
)

// expectContinue is the server's fasthttp ExpectHandler. A request with
// "Expect: 100-continue" gets "100 Continue" only once the checks its
// handler makes before reading a body pass: Host and Origin,
// authentication, route and method, the key or upload token, the other
// headers, and the declared size. Otherwise the final answer (401, 403,
// 404, 405, 413…) goes out at once with the handler's own JSON error body,
// the body is never read, and the connection is closed (RFC 9110 §10.1.1:
// the client may have started sending it anyway).
//
// fasthttp writes the response the ExpectHandler leaves in ctx when it
// returns another status than 100 (v1.74.0; TestArgsExpectContinue checks
// the body arrives).
func (s *Server) expectContinue(ctx *fasthttp.RequestCtx) int {
	if !refuseFraming(ctx) && s.admit(ctx) { // framing.go
		return fasthttp.StatusContinue
	}
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff") // as handle sets on every answer
	return ctx.Response.StatusCode()
}

// admit runs the checks of a request's handler that come before its body
// (see expectContinue); on refusal it answers and reports false.
func (s *Server) admit(ctx *fasthttp.RequestCtx) bool {
	path := string(ctx.Path())
	if s.misdirected(ctx, path) { // origin.go: the download origin's split
		return false
	}
	switch {
	case path == "/mcp":
		return s.gate.CheckMCP(ctx)
	case s.svc != nil && s.svc.Owns(path):
		return s.svc.Admit(ctx)
	case path == "/healthz", path == "/readyz":
		// No body is read there: do not ask for one.
		gate.APIError(ctx, http.StatusBadRequest, "unexpected_body", "this route takes no request body")
		ctx.SetConnectionClose()
		return false
	}
	gate.NotFound(ctx)
	return false
}
