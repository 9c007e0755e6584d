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
// needs, then works on its store as id sees it: the caller's namespace, or
// the whole store (package tenancy). Neither answers: a refusal, 401 or 403
// with an RFC 6750 challenge naming the protected resource metadata
// (docs/auth.md), comes back as a Refusal for the route to answer in its
// surface's own error body: JSON-RPC for /mcp, {"error":…} elsewhere.

// Identify authenticates the request: the caller, or the refusal to answer.
func (g *Gate) Identify(ctx *fasthttp.RequestCtx) (auth.Identity, *Refusal) {
	id, f := g.authenticate(ctx, string(ctx.Request.Header.Peek("Authorization")))
	if f != nil {
		return auth.Identity{}, g.authRefusal(f)
	}
	telemetry.Of(ctx).Principal = id.Principal
	return id, nil
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

// RequireScope is the refusal (403 insufficient_scope) of id when it
// lacks scope, else nil.
func (g *Gate) RequireScope(id auth.Identity, scope string) *Refusal {
	if f := auth.Require(id, scope); f != nil {
		return g.authRefusal(f)
	}
	return nil
}

// authRefusal is the refusal of f: 401 or 403 with its challenge and not
// to be cached; 503 with Retry-After when access tokens cannot be verified,
// which the operator is told.
func (g *Gate) authRefusal(f *auth.Failure) *Refusal {
	r := &Refusal{Status: f.Status, Code: "unauthorized", Message: "a valid bearer token is required"}
	if f.Challenge.Description != "" {
		r.Message = f.Challenge.Description
	}
	if f.Status == http.StatusServiceUnavailable {
		g.Log.Error("server: access tokens cannot be verified: the authorization server's keys are unavailable")
		r.Code, r.header = "unavailable", []string{"Cache-Control", "no-store", "Retry-After", "5"}
		return r
	}
	if f.Status == http.StatusForbidden {
		r.Code = auth.ErrorInsufficientScope
	}
	r.header = []string{"WWW-Authenticate", g.Challenge(f), "Cache-Control", "no-store"}
	return r
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
