package gate

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/tenancy"
)

// A Gate is the set of rules one server applies to its requests. The
// assembly (package server) builds one and hands it to the front and to
// the blob service; its fields do not change once serving.
type Gate struct {
	Auth    *auth.Authenticator
	Tenancy tenancy.Policy
	// Loopback: the server listens on a loopback address, so Host must be
	// a localhost name and Origin, if any, a localhost origin.
	Loopback bool
	// AllowedHosts restricts Host on other binds; AllowedOrigins adds
	// acceptable Origin values.
	AllowedHosts, AllowedOrigins []string
	// PublicURL is the base of the protected resource metadata URL in
	// challenges.
	PublicURL string
	// Uploads are the upload slots; BodyMinRate, BodyGrace and
	// ReadTimeout the rate rule of request bodies (pace.NewReader).
	Uploads     *pace.Slots
	BodyMinRate int64
	BodyGrace   time.Duration
	ReadTimeout time.Duration
	Log         *slog.Logger
}

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
