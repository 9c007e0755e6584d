package server

import (
	"context"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/storage"
)

// Every route that takes a bearer asks identify for the caller (API key or
// OAuth access token, package auth), then requireScope for what the route
// needs, then works on storeFor(id): the caller's namespace, or the whole
// store (package tenancy). Refusals are 401 or 403 with an RFC 6750
// challenge naming the protected resource metadata (docs/auth.md), in the
// surface's own error body: JSON-RPC for /mcp, {"error":…} elsewhere.

// identify authenticates the request. On refusal it answers (rpc: with a
// JSON-RPC error body) and reports !ok.
func (s *Server) identify(ctx *fasthttp.RequestCtx, rpc bool) (auth.Identity, bool) {
	if !s.auth.Enabled() {
		return auth.Open, true
	}
	if ctx.QueryArgs().Has("access_token") {
		s.refuseAuth(ctx, &auth.Failure{Status: http.StatusUnauthorized, Challenge: auth.Challenge{
			Error: auth.ErrorInvalidRequest, Description: "tokens are accepted in the Authorization header only"}}, rpc)
		return auth.Identity{}, false
	}
	id, f := s.auth.Authenticate(context.Background(), string(ctx.Request.Header.Peek("Authorization")))
	if f != nil {
		s.refuseAuth(ctx, f, rpc)
		return auth.Identity{}, false
	}
	telemetry.Of(ctx).Principal = id.Principal
	return id, true
}

// requireScope answers 403 insufficient_scope unless id has scope.
func (s *Server) requireScope(ctx *fasthttp.RequestCtx, id auth.Identity, scope string, rpc bool) bool {
	if f := auth.Require(id, scope); f != nil {
		s.refuseAuth(ctx, f, rpc)
		return false
	}
	return true
}

// challenge completes f's challenge with the metadata URL and, on a 401,
// the scopes a token should ask for.
func (s *Server) challenge(f *auth.Failure) string {
	c := f.Challenge
	if s.auth.OAuth != nil {
		c.ResourceMetadata = auth.MetadataURL(s.opts.PublicURL)
	}
	if c.Scope == "" && f.Status == http.StatusUnauthorized {
		c.Scope = auth.ScopeRead + " " + auth.ScopeWrite
	}
	return c.String()
}

// refuseAuth answers f.
func (s *Server) refuseAuth(ctx *fasthttp.RequestCtx, f *auth.Failure, rpc bool) {
	s.drainSmall(ctx)
	ctx.Response.Header.Set("WWW-Authenticate", s.challenge(f))
	ctx.Response.Header.Set("Cache-Control", "no-store")
	msg := "a valid bearer token is required"
	if f.Challenge.Description != "" {
		msg = f.Challenge.Description
	}
	if f.Status == http.StatusServiceUnavailable {
		s.log.Error("server: access tokens cannot be verified: the authorization server's keys are unavailable")
		ctx.Response.Header.Del("WWW-Authenticate")
		ctx.Response.Header.Set("Retry-After", "5")
	}
	switch {
	case f.Status == http.StatusServiceUnavailable && rpc:
		jsonError(ctx, f.Status, mcp.CodeTransport, "Service Unavailable: "+msg)
	case f.Status == http.StatusServiceUnavailable:
		apiError(ctx, f.Status, "unavailable", msg)
	case rpc && f.Status == http.StatusForbidden:
		jsonError(ctx, f.Status, mcp.CodeTransport, "Forbidden: "+msg)
	case rpc:
		jsonError(ctx, f.Status, mcp.CodeTransport, "Unauthorized: "+msg)
	case f.Status == http.StatusForbidden:
		apiError(ctx, f.Status, auth.ErrorInsufficientScope, msg)
	default:
		apiError(ctx, f.Status, "unauthorized", msg)
	}
}

// authorizeMCP is core/mcp's Authorize hook: the scope a request needs
// (auth.MCPScope), as a 403 with the challenge when missing.
func (s *Server) authorizeMCP(principal string, scopes []string, method, name string) *mcp.Error {
	readOnly := false
	if method == "tools/call" {
		readOnly, _ = s.mcp.ToolReadOnly(name)
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
		WithStatus(http.StatusForbidden).WithHeader("WWW-Authenticate", s.challenge(f))
}

// storeFor is the store as id sees it.
func (s *Server) storeFor(id auth.Identity) storage.Backend {
	return s.tenancy.Store(s.opts.Backend, id)
}

// serveResourceMetadata serves the RFC 9728 protected resource metadata at
// both well-known paths when OAuth is configured (404 otherwise: API keys
// need no discovery).
func (s *Server) serveResourceMetadata(ctx *fasthttp.RequestCtx) {
	if s.auth.OAuth == nil {
		apiError(ctx, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		methodNotAllowed(ctx, "GET, HEAD")
		return
	}
	ctx.Response.Header.Set("Cache-Control", "public, max-age=300")
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	writeJSON(ctx, http.StatusOK, auth.NewResourceMetadata(s.opts.PublicURL, s.opts.OAuthIssuer))
}
