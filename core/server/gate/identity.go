package gate

import (
	"context"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// Every route that takes a bearer asks Identify for the caller (API key or
// OAuth access token, package auth), then RequireScope for what the route
// needs, then works on its store as id sees it: the caller's namespace, or the whole
// store (package tenancy). Refusals are 401 or 403 with an RFC 6750
// challenge naming the protected resource metadata (docs/auth.md), in the
// surface's own error body: JSON-RPC for /mcp, {"error":…} elsewhere.

// Identify authenticates the request. On refusal it answers (rpc: with a
// JSON-RPC error body) and reports !ok.
func (g *Gate) Identify(ctx *fasthttp.RequestCtx, rpc bool) (auth.Identity, bool) {
	if !g.Auth.Enabled() {
		return auth.Open, true
	}
	if ctx.QueryArgs().Has("access_token") {
		g.RefuseAuth(ctx, &auth.Failure{Status: http.StatusUnauthorized, Challenge: auth.Challenge{
			Error: auth.ErrorInvalidRequest, Description: "tokens are accepted in the Authorization header only"}}, rpc)
		return auth.Identity{}, false
	}
	id, f := g.Auth.Authenticate(context.Background(), string(ctx.Request.Header.Peek("Authorization")))
	if f != nil {
		g.RefuseAuth(ctx, f, rpc)
		return auth.Identity{}, false
	}
	telemetry.Of(ctx).Principal = id.Principal
	return id, true
}

// RequireScope answers 403 insufficient_scope unless id has scope.
func (g *Gate) RequireScope(ctx *fasthttp.RequestCtx, id auth.Identity, scope string, rpc bool) bool {
	if f := auth.Require(id, scope); f != nil {
		g.RefuseAuth(ctx, f, rpc)
		return false
	}
	return true
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

// AuthorizeMCP is core/mcp's Authorize hook for the MCP server m: the
// scope a request needs (auth.MCPScope), as a 403 with the challenge when
// missing.
func (g *Gate) AuthorizeMCP(m *mcp.Server, principal string, scopes []string, method, name string) *mcp.Error {
	readOnly := false
	if method == "tools/call" {
		readOnly, _ = m.ToolReadOnly(name)
	}
	scope := auth.MCPScope(method, readOnly)
	if scope == "" {
		return nil
	}
	f := auth.Require(auth.Identity{Principal: principal, Scopes: scopes}, scope)
	if f == nil {
		return nil
	}
	return mcp.NewError(mcp.CodeTransport, "Forbidden: "+f.Challenge.Description, nil).
		WithStatus(http.StatusForbidden).WithHeader("WWW-Authenticate", g.Challenge(f))
}
