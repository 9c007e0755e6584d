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
	id, f := g.authenticate(ctx, string(ctx.Request.Header.Peek("Authorization")))
	if f != nil {
		g.RefuseAuth(ctx, f, rpc) // refuse.go
		return auth.Identity{}, false
	}
	telemetry.Of(ctx).Principal = id.Principal
	return id, true
}

// authenticate finds who sent header: anyone on an open endpoint;
// otherwise the holder of its bearer, which must not come in the query.
func (g *Gate) authenticate(ctx *fasthttp.RequestCtx, header string) (auth.Identity, *auth.Failure) {
	switch {
	case !g.Auth.Enabled():
		return auth.Open, nil
	case ctx.QueryArgs().Has("access_token"):
		return auth.Identity{}, &auth.Failure{Status: http.StatusUnauthorized, Challenge: auth.Challenge{
			Error: auth.ErrorInvalidRequest, Description: "tokens are accepted in the Authorization header only"}}
	}
	return g.Auth.Authenticate(context.Background(), header)
}

// RequireScope answers 403 insufficient_scope unless id has scope.
func (g *Gate) RequireScope(ctx *fasthttp.RequestCtx, id auth.Identity, scope string, rpc bool) bool {
	if f := auth.Require(id, scope); f != nil {
		g.RefuseAuth(ctx, f, rpc)
		return false
	}
	return true
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
