package front

import (
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/framing"
	"github.com/mcpblob/mcpblob/core/server/gate"
)

// refuseFraming answers 400 to a request whose body framing another parser
// could read differently (package framing: Transfer-Encoding with
// Content-Length, a malformed Transfer-Encoding, obs-fold, bare LF) and
// closes its connection once the answer is out, so nothing after it on the
// connection is served; it reports whether it did. handle and
// expectContinue call it first: fasthttp frames such a request by
// Transfer-Encoding and would keep the connection. (A request fasthttp
// refuses itself goes to errorHandler, 400 and closed, with the header
// already reset.)
func refuseFraming(ctx *fasthttp.RequestCtx) bool {
	err := framing.Check(ctx.Request.Header.RawHeaders())
	if err == nil {
		return false
	}
	if string(ctx.Path()) == "/mcp" {
		gate.JSONError(ctx, http.StatusBadRequest, mcp.CodeTransport, "Bad Request: "+err.Error())
	} else {
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", err.Error())
	}
	ctx.SetConnectionClose()
	return true
}
