package gate

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/storage"
)

// DrainLimit bounds how much of an oversized or refused request body is
// read and discarded before the answer goes out.
const DrainLimit = 16 << 20

// A Refusal is the answer to a request a rule of the gate refuses, decided
// and not yet written. The checks (Identify, RequireScope, TakeUploadSlot,
// AdmitMCP's) read no body and write nothing, so a request passes each
// once; the answer goes out at one point (Refuse, or AdmitMCP's own) after
// the refusal's body rule has dealt with the request body.
type Refusal struct {
	Status int
	// Code and Message make the error body {"error":{"code","message"}};
	// on /mcp the JSON-RPC error's message is the status text, ": " and
	// Message.
	Code, Message string
	header        []string // name, value, …: set on the answer
	body          bodyRule
}

// A bodyRule is what a refusal does with the request body before its
// answer goes out.
type bodyRule uint8

const (
	// readSmall, the zero rule, reads a body of at most DrainLimit declared
	// bytes under the rate rule, so a kept-alive client reads the answer
	// and its next request is served; a longer body, one of unknown length
	// or one that stops arriving closes the connection.
	readSmall bodyRule = iota
	// readShort reads a body of at most UploadThreshold declared bytes
	// (an upload refused a slot); any other closes the connection.
	readShort
	// leaveBody neither reads the body nor closes the connection (Host or
	// Origin refused on /mcp).
	leaveBody
	// hangUp closes the connection: what is left of the body cannot be
	// read (it was cut off by the rate rule).
	hangUp
)

// Refuse answers r with the error body {"error":{"code","message"}},
// after its body rule has read the request body (under the rate rule) or
// marked the connection to close.
func (g *Gate) Refuse(ctx *fasthttp.RequestCtx, r *Refusal) {
	r.answer(ctx, g.Paced(ctx), false)
}

// RefuseBody answers an error before the request body was read: a small
// body is read first (under the rate rule), so the client sees the answer
// on a kept-alive connection; a large one closes the connection after the
// answer.
func (g *Gate) RefuseBody(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	g.Refuse(ctx, &Refusal{Status: status, Code: code, Message: msg})
}

// DrainSmall reads a body of at most DrainLimit declared bytes, or marks
// the connection to close: the body rule of RefuseBody, for an answer the
// caller writes itself.
func (g *Gate) DrainSmall(ctx *fasthttp.RequestCtx) {
	readSmallBody(ctx, g.Paced(ctx))
}

// answer writes r once its body rule has dealt with body (the request
// body, nil when there is none): with a JSON-RPC error body on /mcp (rpc),
// else with {"error":{"code","message"}}.
func (r *Refusal) answer(ctx *fasthttp.RequestCtx, body io.Reader, rpc bool) {
	switch r.body {
	case readSmall:
		readSmallBody(ctx, body)
	case readShort:
		if cl := ctx.Request.Header.ContentLength(); cl > 0 && cl <= UploadThreshold {
			discard(body, int64(cl))
		} else {
			ctx.SetConnectionClose() // the body is not read
		}
	case hangUp:
		ctx.SetConnectionClose()
	}
	for i := 0; i+1 < len(r.header); i += 2 {
		ctx.Response.Header.Set(r.header[i], r.header[i+1])
	}
	if rpc {
		JSONError(ctx, r.Status, mcp.CodeTransport, http.StatusText(r.Status)+": "+r.Message)
	} else {
		APIError(ctx, r.Status, r.Code, r.Message)
	}
}

// readSmallBody reads body when its declared length is at most
// DrainLimit, or marks the connection to close.
func readSmallBody(ctx *fasthttp.RequestCtx, body io.Reader) {
	cl := BodyLength(&ctx.Request.Header)
	if cl == 0 || cl > 0 && cl <= DrainLimit && discard(body, int64(cl)) {
		return
	}
	ctx.SetConnectionClose()
}

// BodyLength is the length of h's request body: its Content-Length, -1
// when chunked, and 0 without either. fasthttp reports a request with
// neither as -2, "identity", which for a response means a body up to the
// connection's end but for a request means none (RFC 9112 section 6.3):
// taken for an unknown length, it closed the kept-alive connection after
// every refused or drained GET (a gateway's /g downloads, 404s).
func BodyLength(h *fasthttp.RequestHeader) int {
	if cl := h.ContentLength(); cl != -2 {
		return cl
	}
	return 0
}

// discard reads n bytes of body; false when they did not all arrive.
func discard(body io.Reader, n int64) bool {
	if body == nil {
		return false
	}
	_, err := io.CopyN(io.Discard, body, n)
	return err == nil
}

// cutOff is the refusal of a body cut off by the rate rule.
var cutOff = Refusal{Status: http.StatusRequestTimeout, Code: "timeout",
	Message: "the request body arrived slower than the minimum rate", body: hangUp}

// refusedDrain bounds the rest of a refused MCP body read after the answer.
const refusedDrain = 1 << 20

// Close, once the answer to an admitted request is set, settles what is
// left of its body (a streamed one) and returns its upload slot.
func (a *Admission) Close(ctx *fasthttp.RequestCtx) {
	if a.paced != nil {
		settle(ctx, a.paced)
	}
	if a.release != nil {
		a.release()
	}
}

// settle deals with what is left of a streamed /mcp body once the answer
// is set: a body cut off by the rate rule has its answer replaced by 408;
// a moderately oversized one (413) is read so the client sees the answer;
// any other body not read to its end (a refusal midway: nesting too deep, a
// bad member) has a bounded rest read under the rate rule, so a pipelined
// request after it is answered and the client is not reset before it reads
// the answer; a longer rest closes the connection (it must not be taken for
// the next request).
func settle(ctx *fasthttp.RequestCtx, body *pace.Reader) {
	switch {
	case body.Expired:
		ctx.Response.Reset()
		cutOff.answer(ctx, body, true)
	case ctx.Response.StatusCode() == http.StatusRequestEntityTooLarge:
		// Let a moderately oversized upload finish so the client reads
		// the 413 instead of a connection reset; beyond that, hang up.
		discard(body, DrainLimit)
		ctx.SetConnectionClose()
	case !body.EOF && BodyLength(&ctx.Request.Header) != 0:
		if discard(body, refusedDrain) || !body.EOF { // over refusedDrain, or cut short
			ctx.SetConnectionClose()
		}
	}
}

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

// APIErrorFor answers err as RefuseQuota does when a quota refused it,
// else as APIError with status, code and msg.
func APIErrorFor(ctx *fasthttp.RequestCtx, err error, status int, code, msg string) {
	if !RefuseQuota(ctx, err) {
		APIError(ctx, status, code, msg)
	}
}

// RefuseQuota answers 403 quota_exceeded when err is a refusal by a quota
// (storage.QuotaError), with the limit, the usage and what would still
// fit beside the house's code and message, and reports whether it did.
func RefuseQuota(ctx *fasthttp.RequestCtx, err error) bool {
	qe := storage.QuotaErrorOf(err)
	if qe == nil {
		return false
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "quota_exceeded", "message": "quota exceeded: " + qe.Detail(),
		"quota": qe.What, "limit": qe.Limit, "usage": qe.Usage, "fits": qe.Fits}})
	ctx.SetStatusCode(http.StatusForbidden)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
	return true
}
