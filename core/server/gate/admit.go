package gate

import (
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// A Caller is who an admitted /mcp request comes from, with what core/mcp
// needs to know of its credential.
type Caller struct {
	auth.Identity
	// Audience is the audience of its notifications (package tenancy).
	Audience string
	// StillValid checks, for what outlives the request (a notification
	// stream), that its credential is still accepted; nil when only
	// Identity.Expires ends it.
	StillValid func() bool
}

// AdmitMCP admits a request to /mcp: Host and Origin first, then its
// credential. On refusal it answers, with a JSON-RPC error body, and
// reports !ok. The decisions come first and the one answer last, so a
// request passes each check once, in order.
func (g *Gate) AdmitMCP(ctx *fasthttp.RequestCtx) (Caller, bool) {
	c, why, f := g.decideMCP(ctx)
	telemetry.Of(ctx).Principal = c.Principal // "" when refused
	switch {
	case why != "":
		JSONError(ctx, http.StatusForbidden, mcp.CodeTransport, "Forbidden: "+why)
	case f != nil:
		g.RefuseAuth(ctx, f, true)
	default:
		return c, true
	}
	return Caller{}, false
}

// decideMCP makes AdmitMCP's checks without answering: why Host or
// Origin is refused, or the credential's failure, or the caller.
func (g *Gate) decideMCP(ctx *fasthttp.RequestCtx) (c Caller, why string, f *auth.Failure) {
	if why = g.CheckHostOrigin(ctx); why != "" {
		return Caller{}, why, nil
	}
	header := string(ctx.Request.Header.Peek("Authorization"))
	if c.Identity, f = g.authenticate(ctx, header); f != nil {
		return Caller{}, "", f
	}
	c.StillValid = g.Auth.StillValid(header, c.Identity)
	c.Audience = g.Tenancy.Audience(c.Identity)
	return c, "", nil
}
