// Package observe holds what the MCP endpoint tells its transport for
// metrics, access logs and traces: a request's Note, the count of SSE
// streams in progress, and the context that carries a request's values
// under the server's lifetime (and tells them when work starts under
// them: Work).
package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
)

// Note is what the MCP endpoint reports back about one HTTP request: the
// JSON-RPC method (a method the server offers, or "other"), the tool a
// tools/call found, the protocol era ("2025-11-25" for session-era
// messages of every version, "2026-07-28"), and the outcome: "ok",
// "tool_error" (a tool's isError result), "error" (a JSON-RPC error) or ""
// when the request was not a JSON-RPC request (a notification, a response,
// GET or DELETE). An SSE answer counts as "ok" once its stream starts.
// Meta is the trace context of the request's params._meta (TraceMeta:
// traceparent, tracestate, baggage, copied; nil without one), where
// tracing finds it.
type Note struct {
	Method, Tool, Era, Outcome string
	Meta                       map[string]json.RawMessage
}

// traceKeys are the _meta members of W3C trace context (the 2026-07-28
// revision reserves them), the only ones a Note keeps.
var traceKeys = [...]string{"traceparent", "tracestate", "baggage"}

// maxTraceMember bounds a kept member: W3C allows baggage 8,192 bytes,
// tracestate 512, traceparent 55.
const maxTraceMember = 8192 + 2

// TraceMeta is what a Note keeps of a request's _meta: its trace context
// members, copied (nil when it has none). A Note lives as long as its
// request, a listen stream's for hours, and the members of _meta are
// slices of the request's body: keeping them would keep the whole body.
func TraceMeta(meta map[string]json.RawMessage) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, k := range traceKeys {
		v, ok := meta[k]
		if !ok || len(v) > maxTraceMember {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(traceKeys))
		}
		out[k] = bytes.Clone(v)
	}
	return out
}

// Outcomes of Note.Outcome.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error"
	OutcomeError     = "error"
)

// Streams counts the SSE streams in progress.
type Streams struct{ sse, listen atomic.Int64 }

// Track counts one stream until the returned func is called.
func (a *Streams) Track(listen bool) func() {
	n := &a.sse
	if listen {
		n = &a.listen
	}
	n.Add(1)
	return func() { n.Add(-1) }
}

// Load reports the streams in progress: SSE answers and 2025-11-25 GET
// streams, and 2026-07-28 subscriptions/listen streams.
func (a *Streams) Load() (sse, listen int64) { return a.sse.Load(), a.listen.Load() }

// WithValues returns base with the values of values (nil: base itself):
// work under it ends with base, not with values. The endpoint calls it
// where a request's work starts (a call, a file argument's sink); values
// that are a Work are told, and their Begin's context is used.
func WithValues(base, values context.Context) context.Context {
	if values == nil {
		return base
	}
	if w, ok := values.(Work); ok {
		values = w.Begin()
	}
	return merged{base, values}
}

// Work is a request's values that want to know when work starts under
// them: tracing starts the request's MCP span then (package
// core/server/telemetry). Begin returns the values to use, itself when it
// has nothing to add; it may be called more than once.
type Work interface {
	context.Context
	Begin() context.Context
}

type merged struct {
	context.Context
	values context.Context
}

func (c merged) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}
