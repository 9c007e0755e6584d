package gate

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// Limits against slow or many clients (docs/security.md "Limits"): a cap on
// connections (MaxConns and MaxConnsPerIP, package connlimit), a cap on uploads
// in progress (Gate.Uploads), and a minimum transfer rate for request
// bodies (Gate.Paced). Buffers are taken when bytes arrive, not when a
// request starts (the scanner's, the multipart reader's, ingest's chunks),
// so a connection that trickles holds little memory while it lives, and
// the rate rule bounds how long that is.

// retryAfter is the Retry-After, in seconds, of an upload refused for a
// limit.
const retryAfter = 2

// UploadThreshold: a POST /mcp body longer than this, or of unknown
// length (chunked), is an upload and needs an upload slot; shorter ones
// hold at most this much and are bounded by the rate rule alone. It is the
// length beyond which the scanner diverts a string to storage or a spool.
const UploadThreshold = 64 << 10

// TakeUploadSlot takes an upload slot for principal or answers the refusal
// (JSON-RPC shaped on /mcp, the control API's error elsewhere) with
// Retry-After, reading a small body or closing the connection.
func (g *Gate) TakeUploadSlot(ctx *fasthttp.RequestCtx, principal string, rpc bool) (release func(), ok bool) {
	release, status := g.Uploads.Acquire(principal)
	if release != nil {
		return release, true
	}
	code, msg := "busy", "too many uploads in progress; retry later"
	if status == http.StatusTooManyRequests {
		code, msg = "too_many_uploads", "too many uploads in progress for this principal; retry later"
	}
	if cl := ctx.Request.Header.ContentLength(); cl <= 0 || cl > UploadThreshold {
		ctx.SetConnectionClose() // the body is not read
	} else {
		_, _ = io.CopyN(io.Discard, g.Paced(ctx), int64(cl))
	}
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfter))
	if rpc {
		JSONError(ctx, status, mcp.CodeTransport, http.StatusText(status)+": "+msg)
	} else {
		APIError(ctx, status, code, msg)
	}
	return nil, false
}

// RequestBody returns the request body stream (bodies stream: the server
// runs with StreamRequestBody).
func RequestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if bs := ctx.RequestBodyStream(); bs != nil {
		return bs
	}
	return bytes.NewReader(ctx.Request.Body())
}

// Paced returns the request body stream under the rate rule.
func (g *Gate) Paced(ctx *fasthttp.RequestCtx) *pace.Reader {
	body, received := RequestBody(ctx), &telemetry.Of(ctx).Received
	return pace.NewReader(body, ctx.Conn(), g.BodyMinRate, g.BodyGrace, g.ReadTimeout, received)
}
