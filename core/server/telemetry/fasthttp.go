package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/metrics"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/observed"
)

// BeginRequest opens the Record of the request at path; handlers find it
// with Of, storage calls given ctx find its id under IDKey.
func (t *Tracker) BeginRequest(ctx *fasthttp.RequestCtx, path string) {
	rec := t.Begin(methodString(ctx.Method()), path, string(ctx.Request.Header.Peek(HeaderRequestID)))
	if t.tracer != nil {
		h := &ctx.Request.Header
		rec.trace = &recordTrace{tracer: t.tracer,
			http: t.tracer.StartRequest(rec.Method, rec.Route, string(h.Peek(HeaderTraceParent)), string(h.Peek(HeaderTraceState)))}
	}
	ctx.SetUserValue(IDKey, rec)
}

// methodString is the HTTP method m, a constant for the common ones.
func methodString(m []byte) string {
	switch string(m) { // compiled to comparisons: no conversion is made
	case fasthttp.MethodPost:
		return fasthttp.MethodPost
	case fasthttp.MethodGet:
		return fasthttp.MethodGet
	case fasthttp.MethodHead:
		return fasthttp.MethodHead
	case fasthttp.MethodPatch:
		return fasthttp.MethodPatch
	case fasthttp.MethodPut:
		return fasthttp.MethodPut
	case fasthttp.MethodDelete:
		return fasthttp.MethodDelete
	case fasthttp.MethodOptions:
		return fasthttp.MethodOptions
	}
	return string(m)
}

// Of is the request's Record (a detached one outside BeginRequest).
func Of(ctx *fasthttp.RequestCtx) *Record {
	if rec, ok := ctx.UserValue(IDKey).(*Record); ok {
		return rec
	}
	return &Record{}
}

// FinishingBody is a response body stream that reports, once, the bytes it
// sent when it is done (bodystream.Counted).
type FinishingBody interface {
	OnFinish(func(sent int64))
}

// EndRequest returns the request id in the response and ends the Record.
// A body fasthttp streams after the handler returns (a download, an SSE
// stream) is logged when it is done, with the bytes it sent and the time
// it took; a FinishingBody tells when. The request metrics are recorded now,
// at the response's start.
func (t *Tracker) EndRequest(ctx *fasthttp.RequestCtx) {
	rec := Of(ctx)
	ctx.Response.Header.Set(HeaderRequestID, rec.ID)
	status := ctx.Response.StatusCode()
	var sent int64
	switch {
	case ctx.IsHead():
	case ctx.Response.IsBodyStream():
		if fb, ok := ctx.Response.BodyStream().(FinishingBody); ok {
			received := t.answered(rec, status, int64(ctx.Request.Header.ContentLength()))
			fb.OnFinish(func(sent int64) { t.finished(rec, status, sent, received) })
			return
		}
		sent = int64(ctx.Response.Header.ContentLength()) // -1: unknown
	default:
		sent = int64(len(ctx.Response.Body()))
	}
	t.End(rec, status, sent, int64(ctx.Request.Header.ContentLength()))
}

// ContentType is the Prometheus text exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// ServeMetrics answers with the metrics in the Prometheus text format.
func (t *Tracker) ServeMetrics(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType(ContentType)
	t.metrics.WritePrometheus(ctx)
}

// ObserveBackend wraps b so each storage operation is counted and timed
// in m under b's backend name; a failed one is logged with the request id
// its context carries. With tr (nil: tracing off), each operation is also
// a span, a child of the span its context carries.
func ObserveBackend(b storage.Backend, m *metrics.Set, log *slog.Logger, tr Tracer) storage.Backend {
	name := BackendName(b)
	return observed.Wrap(b, func(ctx context.Context, op, outcome string, d time.Duration) {
		m.Storage(name, op, outcome, d)
		if outcome == observed.Failed {
			log.Warn("server: storage operation failed", "backend", name, "op", op, "request_id", RequestID(ctx))
		}
		if tr != nil {
			tr.Storage(SpanParent(ctx), name, op, outcome, d)
		}
	})
}

// BackendName is the backend label: the package of b's type ("localfs",
// "s3"), a bounded value.
func BackendName(b storage.Backend) string {
	name := strings.TrimPrefix(fmt.Sprintf("%T", b), "*")
	if pkg, _, ok := strings.Cut(name, "."); ok {
		return pkg
	}
	return name
}
