package gate

import (
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// AdmitMCP admits a request to /mcp. Every check comes first, and none
// answers or reads the body: Host and Origin, the credential, an upload
// slot for a large body. Then the body is taken, once, and a refusal is
// answered through it at one point, with a JSON-RPC error body; !ok then.
func (g *Gate) AdmitMCP(ctx *fasthttp.RequestCtx) (*Admission, bool) {
	c, refused := g.callerMCP(ctx)
	a := &Admission{Caller: c, Record: telemetry.Of(ctx)}
	a.Record.Principal = c.Principal         // "" when refused
	refused = g.takeMCPBody(ctx, a, refused) // body.go
	if refused != nil {
		refused.answer(ctx, a.Body, true) // refuse.go
		return nil, false
	}
	return a, true
}

// callerMCP checks Host and Origin, then the credential: the caller, or
// the refusal.
func (g *Gate) callerMCP(ctx *fasthttp.RequestCtx) (c Caller, refused *Refusal) {
	if why := g.CheckHostOrigin(ctx); why != "" {
		return Caller{}, &Refusal{Status: http.StatusForbidden, Code: "forbidden", Message: why, body: leaveBody}
	}
	header := string(ctx.Request.Header.Peek("Authorization"))
	var f *auth.Failure
	if c.Identity, f = g.authenticate(ctx, header); f != nil {
		return Caller{}, g.authRefusal(f)
	}
	c.StillValid = g.Auth.StillValid(header, c.Identity)
	c.Audience = g.Tenancy.Audience(c.Identity)
	return c, nil
}

// CheckMCP makes AdmitMCP's checks of the header alone (Host and Origin,
// the credential), for Expect: 100-continue, before the body is sent: on
// refusal it answers, marking a connection with a body to close, and
// reports false.
func (g *Gate) CheckMCP(ctx *fasthttp.RequestCtx) bool {
	_, refused := g.callerMCP(ctx)
	if refused != nil {
		refused.answer(ctx, nil, true)
	}
	return refused == nil
}
