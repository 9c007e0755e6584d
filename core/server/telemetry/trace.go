package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/observe"
)

// Tracing hooks. Package core/server/tracing implements them over
// OpenTelemetry; this package only calls them, and only when a Tracker
// was given a Tracer (SetTracer): without one, a request makes no span,
// reads no trace header and allocates nothing for tracing.
//
// A traced request has an HTTP span from BeginRequest to the end of its
// response body and, on /mcp, an MCP span from the moment the endpoint
// starts work under the request's context (observe.Work) to the same end.
// The MCP span's parent is the trace context of the message's
// params._meta when that is valid (the _meta keys win), else the HTTP
// span. A file argument may stream to storage before the message (and
// its _meta) has been read: the work is then marked as begun, and the
// span starts, with that start time, when the method is known, or
// earlier if a child needs its parent first (SpanParent); in that case it
// is the HTTP span's child, and a valid _meta context becomes a link.
// Children (storage operations, the gateway's upstream call, tus chunks,
// large decodes) find their parent with SpanParent.

// W3C trace context headers, read when tracing is on.
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// Tracer makes the spans of the HTTP front, the MCP endpoint and the
// storage operations.
type Tracer interface {
	// StartRequest starts the span of one HTTP request (method, route
	// name), a child of the trace context its traceparent and tracestate
	// headers carry, if valid.
	StartRequest(method, route, traceparent, tracestate string) Span
	// StartMCP starts, at start, the span of an MCP request: a child of
	// tc, params._meta's trace context, when that is valid, else of
	// parent (the HTTP span's context).
	StartMCP(parent context.Context, tc TraceContext, start time.Time) MCPSpan
	// Storage records one storage operation that took d and has just
	// ended, as a child of the span parent carries (nil: no span).
	Storage(parent context.Context, backend, op, outcome string, d time.Duration)
	// StartUpstream starts the span of the gateway's upstream call under
	// parent, sets header's trace context to it, and returns the func
	// that ends it with the call's outcome.
	StartUpstream(parent context.Context, header http.Header) func(outcome string)
	// StartDecode starts the span of a large base64 decode (the SIMD
	// decoder's stream conversion) under parent and returns the func that
	// ends it with the bytes decoded.
	StartDecode(parent context.Context) func(decoded int64, failed bool)
}

// TraceContext is a W3C trace context as a message sent it.
type TraceContext struct {
	TraceParent, TraceState, Baggage string
}

// Span is an HTTP request's span in progress.
type Span interface {
	// Context carries the span, for its children.
	Context() context.Context
	// TraceID is the trace id in hex, for the access log.
	TraceID() string
	// End ends the span with the response's status and byte counts.
	End(status int, sent, received int64)
}

// MCPSpan is an MCP request's span in progress.
type MCPSpan interface {
	// Context carries the span, for its children.
	Context() context.Context
	// End ends the span with the request's Note; late is the trace
	// context of a _meta read after the span had started (empty
	// otherwise), recorded as a link.
	End(n observe.Note, late TraceContext)
}

// SetTracer makes t trace each request with tr (nil: tracing off). Call
// it before serving.
func (t *Tracker) SetTracer(tr Tracer) { t.tracer = tr }

// Tracer is t's Tracer, nil when tracing is off.
func (t *Tracker) Tracer() Tracer { return t.tracer }

// SpanParent is the context of the innermost span of the request ctx
// belongs to, for a child span; nil when the request is not traced (or
// ctx belongs to none).
func SpanParent(ctx context.Context) context.Context {
	if ctx == nil {
		return nil
	}
	if r, ok := ctx.Value(IDKey).(*Record); ok && r.trace != nil {
		return r.trace.parent()
	}
	return nil
}

// recordTrace is a traced request's spans. mu guards the fields below
// it: children look for their parent from any goroutine.
type recordTrace struct {
	tracer  Tracer
	http    Span
	mu      sync.Mutex
	mcp     MCPSpan
	pending time.Time // work began before the method was known
	early   bool      // mcp started before the message's _meta was read
	ended   bool
}

// begin starts the MCP span once n names the method, or marks the work
// as begun while the message is still being read (n.Method "").
func (t *recordTrace) begin(n *observe.Note) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.mcp != nil || t.ended:
	case n.Method == "" && t.pending.IsZero():
		t.pending = time.Now()
	case n.Method != "":
		t.startMCP(metaTrace(n.Meta))
	}
}

// startMCP starts the MCP span under tc or the HTTP span; mu is held.
func (t *recordTrace) startMCP(tc TraceContext) {
	start := t.pending
	if start.IsZero() {
		start = time.Now()
	}
	t.mcp = t.tracer.StartMCP(t.http.Context(), tc, start)
}

// parent is the innermost span's context; a child that ends while work
// is pending starts the MCP span first (its _meta unknown: early).
func (t *recordTrace) parent() context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mcp == nil && !t.pending.IsZero() && !t.ended {
		t.early = true
		t.startMCP(TraceContext{})
	}
	if t.mcp != nil {
		return t.mcp.Context()
	}
	return t.http.Context()
}

// end ends the MCP span, if any, then the HTTP span.
func (t *recordTrace) end(n observe.Note, status int, sent, received int64) {
	t.mu.Lock()
	t.ended = true
	mcp, early := t.mcp, t.early
	t.mu.Unlock()
	if mcp != nil {
		var late TraceContext
		if early {
			late = metaTrace(n.Meta)
		}
		mcp.End(n, late)
	}
	t.http.End(status, sent, received)
}

// metaTrace reads the W3C trace context members of a message's _meta.
func metaTrace(meta map[string]json.RawMessage) TraceContext {
	var tc TraceContext
	if meta == nil {
		return tc
	}
	_ = json.Unmarshal(meta["traceparent"], &tc.TraceParent)
	_ = json.Unmarshal(meta["tracestate"], &tc.TraceState)
	_ = json.Unmarshal(meta["baggage"], &tc.Baggage)
	return tc
}

// TraceUpstream is the gateway's hook (gateway.Options.TraceUpstream)
// over tr: the upstream call of a traced request is a child of its
// innermost span, and the upstream request carries that span's trace
// context. nil when tr is.
func TraceUpstream(tr Tracer) func(values context.Context, header http.Header) func(outcome string) {
	if tr == nil {
		return nil
	}
	return func(values context.Context, header http.Header) func(string) {
		if parent := SpanParent(values); parent != nil {
			return tr.StartUpstream(parent, header)
		}
		return func(string) {}
	}
}

// TraceDecode is the gateway's decode hook (gateway.Options.TraceDecode)
// over tr: a downloadUrl's decode is a child of its request's span. nil
// when tr is.
func TraceDecode(tr Tracer) func(values context.Context) func(int64, bool) {
	if tr == nil {
		return nil
	}
	return func(values context.Context) func(int64, bool) {
		if parent := SpanParent(values); parent != nil {
			return tr.StartDecode(parent)
		}
		return func(int64, bool) {}
	}
}
