package gate

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/valyala/fasthttp"

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

// TakeUploadSlot takes an upload slot for principal: its release, or the
// refusal to answer, with Retry-After (503 when every slot is taken, 429
// when the principal's are). The refusal reads a body of at most
// UploadThreshold declared bytes; any other closes the connection.
func (g *Gate) TakeUploadSlot(principal string) (release func(), refused *Refusal) {
	release, status := g.Uploads.Acquire(principal)
	if release != nil {
		return release, nil
	}
	r := &Refusal{Status: status, Code: "busy", Message: "too many uploads in progress; retry later",
		header: []string{"Retry-After", strconv.Itoa(retryAfter)}, body: readShort}
	if status == http.StatusTooManyRequests {
		r.Code, r.Message = "too_many_uploads", "too many uploads in progress for this principal; retry later"
	}
	return nil, r
}

// takeMCPBody takes an /mcp request's body into a, once: nil when there
// is none; the bytes fasthttp already holds when it read the body whole;
// else the stream, read under the rate rule and counted into a's Record.
// A streamed POST body over UploadThreshold or of unknown length is an
// upload, which needs a slot while it arrives: unless refused already
// (the checks before), it takes one for a's caller. It returns the
// refusal to answer, if any.
func (g *Gate) takeMCPBody(ctx *fasthttp.RequestCtx, a *Admission, refused *Refusal) *Refusal {
	bs := ctx.RequestBodyStream()
	if bs == nil {
		if b := ctx.Request.Body(); len(b) > 0 {
			a.Body = bytes.NewReader(b)
		}
		return refused
	}
	if cl := ctx.Request.Header.ContentLength(); refused == nil && ctx.IsPost() && (cl == -1 || cl > UploadThreshold) {
		a.release, refused = g.TakeUploadSlot(a.Principal)
	}
	a.paced = g.pace(bs, ctx, &a.Record.Received)
	a.Body = a.paced
	return refused
}

// RequestBody returns the request body stream (bodies stream: the server
// runs with StreamRequestBody).
func RequestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if bs := ctx.RequestBodyStream(); bs != nil {
		return bs
	}
	return bytes.NewReader(ctx.Request.Body())
}

// Paced returns the request body stream under the rate rule, counted into
// the request's telemetry Record.
func (g *Gate) Paced(ctx *fasthttp.RequestCtx) *pace.Reader {
	return g.pace(RequestBody(ctx), ctx, &telemetry.Of(ctx).Received)
}

// pace reads body, arriving on ctx's connection, under the rate rule.
func (g *Gate) pace(body io.Reader, ctx *fasthttp.RequestCtx, received *int64) *pace.Reader {
	return pace.NewReader(body, ctx.Conn(), g.BodyMinRate, g.BodyGrace, g.ReadTimeout, received)
}
