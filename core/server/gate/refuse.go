package gate

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
)

// DrainLimit bounds how much of an oversized or refused request body is
// read and discarded before the answer goes out.
const DrainLimit = 16 << 20

// APIError writes {"error":{"code","message"}}.
func APIError(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// JSONError writes a JSON-RPC error body (the /mcp surface).
func JSONError(ctx *fasthttp.RequestCtx, status, code int, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(mcp.ErrorBody(code, msg))
}

// WriteJSON writes v as a JSON body with status.
func WriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: control API response does not marshal: " + err.Error())
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// MethodNotAllowed answers 405 with Allow.
func MethodNotAllowed(ctx *fasthttp.RequestCtx, allow string) {
	ctx.Response.Header.Set("Allow", allow)
	APIError(ctx, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed; use "+allow)
}

// NotFound answers 404 in plain text.
func NotFound(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(http.StatusNotFound)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString("not found\n")
}

// RefuseBody answers an error before the request body was read: a small
// body is read first (under the rate rule), so the client sees the answer
// on a kept-alive connection; a large one closes the connection after the
// answer.
func (g *Gate) RefuseBody(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	g.DrainSmall(ctx)
	APIError(ctx, status, code, msg)
}

// DrainSmall reads a body of at most DrainLimit declared bytes, or marks
// the connection to close.
func (g *Gate) DrainSmall(ctx *fasthttp.RequestCtx) {
	cl := ctx.Request.Header.ContentLength()
	if cl == 0 {
		return
	}
	if cl > 0 && cl <= DrainLimit {
		if _, err := io.CopyN(io.Discard, g.Paced(ctx), int64(cl)); err == nil {
			return
		}
	}
	ctx.SetConnectionClose()
}

// Challenge completes f's challenge with the metadata URL and, on a 401,
// the scopes a token should ask for.
func (g *Gate) Challenge(f *auth.Failure) string {
	c := f.Challenge
	if g.Auth.OAuth != nil {
		c.ResourceMetadata = auth.MetadataURL(g.PublicURL)
	}
	if c.Scope == "" && f.Status == http.StatusUnauthorized {
		c.Scope = auth.ScopeRead + " " + auth.ScopeWrite
	}
	return c.String()
}

// RefuseAuth answers f.
func (g *Gate) RefuseAuth(ctx *fasthttp.RequestCtx, f *auth.Failure, rpc bool) {
	g.DrainSmall(ctx)
	ctx.Response.Header.Set("WWW-Authenticate", g.Challenge(f))
	ctx.Response.Header.Set("Cache-Control", "no-store")
	msg := "a valid bearer token is required"
	if f.Challenge.Description != "" {
		msg = f.Challenge.Description
	}
	if f.Status == http.StatusServiceUnavailable {
		g.Log.Error("server: access tokens cannot be verified: the authorization server's keys are unavailable")
		ctx.Response.Header.Del("WWW-Authenticate")
		ctx.Response.Header.Set("Retry-After", "5")
	}
	switch {
	case f.Status == http.StatusServiceUnavailable && rpc:
		JSONError(ctx, f.Status, mcp.CodeTransport, "Service Unavailable: "+msg)
	case f.Status == http.StatusServiceUnavailable:
		APIError(ctx, f.Status, "unavailable", msg)
	case rpc && f.Status == http.StatusForbidden:
		JSONError(ctx, f.Status, mcp.CodeTransport, "Forbidden: "+msg)
	case rpc:
		JSONError(ctx, f.Status, mcp.CodeTransport, "Unauthorized: "+msg)
	case f.Status == http.StatusForbidden:
		APIError(ctx, f.Status, auth.ErrorInsufficientScope, msg)
	default:
		APIError(ctx, f.Status, "unauthorized", msg)
	}
}
