package server

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// Limits against slow or many clients (docs/security.md "Limits"): a cap on
// connections (MaxConns and MaxConnsPerIP, package connlimit), a cap on uploads
// in progress (uploadSlots), and a minimum transfer rate for request
// bodies (paceReader). Buffers are taken when bytes arrive, not when a
// request starts (the scanner's, the multipart reader's, ingest's chunks),
// so a connection that trickles holds little memory while it lives, and
// the rate rule bounds how long that is.

// Defaults of the limits in [Options].
const (
	DefaultMaxConns               = 4096
	DefaultMaxUploads             = 128
	DefaultMaxUploadsPerPrincipal = 32
	DefaultBodyMinRate            = 4 << 10 // bytes per second
	DefaultBodyGrace              = 10 * time.Second
)

// retryAfter is the Retry-After, in seconds, of an upload refused for a
// limit.
const retryAfter = 2

// mcpUploadThreshold: a POST /mcp body longer than this, or of unknown
// length (chunked), is an upload and needs an upload slot; shorter ones
// hold at most this much and are bounded by the rate rule alone. It is the
// length beyond which the scanner diverts a string to storage or a spool.
const mcpUploadThreshold = 64 << 10

// limitDefaults fills in the defaults of the limits of opts.
func limitDefaults(opts *Options) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxUploads <= 0 {
		opts.MaxUploads = DefaultMaxUploads
	}
	if opts.MaxUploadsPerPrincipal <= 0 {
		opts.MaxUploadsPerPrincipal = DefaultMaxUploadsPerPrincipal
	}
	if opts.BodyMinRate == 0 {
		opts.BodyMinRate = DefaultBodyMinRate
	}
	if opts.BodyGrace <= 0 {
		opts.BodyGrace = DefaultBodyGrace
	}
}

// takeUploadSlot takes an upload slot for principal or answers the refusal
// (JSON-RPC shaped on /mcp, the control API's error elsewhere) with
// Retry-After, reading a small body or closing the connection.
func (s *Server) takeUploadSlot(ctx *fasthttp.RequestCtx, principal string, rpc bool) (release func(), ok bool) {
	release, status := s.uploads.Acquire(principal)
	if release != nil {
		return release, true
	}
	code, msg := "busy", "too many uploads in progress; retry later"
	if status == http.StatusTooManyRequests {
		code, msg = "too_many_uploads", "too many uploads in progress for this principal; retry later"
	}
	if cl := ctx.Request.Header.ContentLength(); cl <= 0 || cl > mcpUploadThreshold {
		ctx.SetConnectionClose() // the body is not read
	} else {
		_, _ = io.CopyN(io.Discard, s.paced(ctx), int64(cl))
	}
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfter))
	if rpc {
		jsonError(ctx, status, mcp.CodeTransport, http.StatusText(status)+": "+msg)
	} else {
		apiError(ctx, status, code, msg)
	}
	return nil, false
}

// requestBody returns the request body stream (bodies stream: the server
// runs with StreamRequestBody).
func (s *Server) requestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if bs := ctx.RequestBodyStream(); bs != nil {
		return bs
	}
	return bytes.NewReader(ctx.Request.Body())
}

// paced returns the request body stream under the rate rule.
func (s *Server) paced(ctx *fasthttp.RequestCtx) *paceReader {
	return pace.NewReader(s.requestBody(ctx), ctx.Conn(), s.opts.BodyMinRate, s.opts.BodyGrace, s.opts.ReadTimeout,
		&telemetry.Of(ctx).Received)
}

type (
	paceReader  = pace.Reader
	bodyError   = pace.BodyError
	uploadSlots = pace.Slots
)
