package resumable

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/tus"
)

// NewRequest is the tus request of ctx for upload ("" for the creation
// endpoint) by principal: its headers, and its body read under g's rate
// rule (none for HEAD, OPTIONS and DELETE). Package linktus serves the
// upload endpoints' tus with it too.
func NewRequest(ctx *fasthttp.RequestCtx, g *gate.Gate, upload, principal string) tus.Request {
	hdr := &ctx.Request.Header
	method := string(ctx.Method())
	req := tus.Request{Method: method, ID: upload, Principal: principal,
		Header:        func(name string) string { return headerValue(hdr, name) },
		ContentLength: int64(max(hdr.ContentLength(), -1)), Body: g.Paced(ctx)}
	if method == http.MethodHead || method == http.MethodOptions || method == http.MethodDelete {
		req.ContentLength, req.Body = 0, strings.NewReader("")
	}
	return req
}

// headerValue is a request header's value. A header sent more than once
// reads as its values joined by ", " (RFC 9110 §5.3), so two Upload-Length
// or Upload-Offset lines are refused as malformed instead of the first
// silently winning (a proxy in front may have read the other one).
func headerValue(hdr *fasthttp.RequestHeader, name string) string {
	vs := hdr.PeekAll(name)
	if len(vs) <= 1 {
		return string(hdr.Peek(name))
	}
	return string(bytes.Join(vs, []byte(", ")))
}

// Write answers resp: its headers, and a refusal as the JSON error body;
// an internal cause goes to log only. What is left of a refused request's
// body (the request's Body) is read first, up to gate.DrainLimit bytes, so
// the answer reaches a client still sending it: closing a connection with
// unread bytes resets it, and the client would see a reset instead of,
// say, a 409 naming the offset. A longer or cut body closes the connection.
func Write(ctx *fasthttp.RequestCtx, log *slog.Logger, resp tus.Response, body io.Reader) {
	for _, kv := range resp.Header {
		ctx.Response.Header.Set(kv[0], kv[1])
	}
	if resp.Error == nil {
		ctx.SetStatusCode(resp.Status)
		return
	}
	if resp.Error.Err != nil {
		log.Debug("server: tus", "status", resp.Status, "err", resp.Error.Err)
		if resp.Status >= 500 {
			log.Error("server: tus", "err", resp.Error.Err)
		}
	}
	if string(ctx.Method()) != http.MethodHead && !drained(body) {
		ctx.SetConnectionClose()
	}
	gate.APIErrorFor(ctx, resp.Error.Err, resp.Status, resp.Code, resp.Message)
}

// drained reads the rest of body when it ends within gate.DrainLimit
// bytes; false when it is longer, or fails (cut, too slow).
func drained(body io.Reader) bool {
	if p, ok := body.(*pace.Reader); ok && (p.EOF || p.Expired) {
		return p.EOF // read to its end, or cut by the rate rule
	}
	if body == nil {
		return true
	}
	n, err := io.Copy(io.Discard, io.LimitReader(body, gate.DrainLimit+1))
	return err == nil && n <= gate.DrainLimit
}
