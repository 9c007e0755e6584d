package mcp

import (
	"context"
	"sync/atomic"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Note is what the MCP endpoint reports back about one HTTP request, for
// the caller's metrics and access log: the JSON-RPC method (a method the
// server offers, or "other"), the tool or resource name a tools/call or
// prompts/get names, the protocol era ("2025-11-25" for session-era
// messages of every version, "2026-07-28"), and the outcome: "ok",
// "tool_error" (a tool's isError result), "error" (a JSON-RPC error) or
// "" when the request was not a JSON-RPC request (a notification, a
// response, GET or DELETE). An SSE answer counts as "ok" once its stream
// starts.
type Note struct {
	Method, Tool, Era, Outcome string
}

// Outcomes of Note.Outcome.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error"
	OutcomeError     = "error"
)

// Eras of Note.Era.
const (
	EraSession   = Version20251125
	EraStateless = VersionModern
)

// notedWriter carries a request's Note to writeError, which marks it.
type notedWriter struct {
	ResponseWriter
	note *Note
}

// noteError marks w's note, if any, with a JSON-RPC error.
func noteError(w ResponseWriter) {
	if nw, ok := w.(notedWriter); ok && nw.note.Method != "" {
		nw.note.Outcome = OutcomeError
	}
}

// noteRequest records a JSON-RPC request's method, tool and era on its
// note. Only names the server offers are recorded, so a note's values are
// bounded whatever the client sends.
func (s *Server) noteRequest(r *Request, msg *jsonrpc.Message, modern bool) {
	n := r.Note
	if n == nil {
		return
	}
	n.Era, n.Method, n.Outcome = EraSession, "other", OutcomeOK
	if modern {
		n.Era = EraStateless
	}
	if s.offered(msg.Method) != nil || msg.Method == "initialize" {
		n.Method = msg.Method
	}
}

// noteTool records the tool a tools/call found (the server's own name).
func noteTool(c *Call, t *tool) {
	if c.note != nil {
		c.note.Tool = t.Name
	}
}

// noteResult marks a tool's isError result.
func noteResult(c *Call, v any) {
	if tr, ok := v.(*ToolResult); ok && tr.IsError && c.note != nil {
		c.note.Outcome = OutcomeToolError
	}
}

// requestContext is the values of the request's Context (its request id)
// under the server's lifetime: calls end when the server closes, not when
// the transport's context does.
type requestContext struct {
	context.Context
	values context.Context
}

func (c requestContext) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// callContext returns the context a call's work runs under.
func (s *Server) callContext(c *Call) (context.Context, context.CancelFunc) {
	return context.WithCancel(s.withValues(c.values))
}

// requestContext is the server's context with r's values.
func (s *Server) requestContext(r *Request) context.Context { return s.withValues(r.Context) }

func (s *Server) withValues(values context.Context) context.Context {
	if values == nil {
		return s.baseCtx
	}
	return requestContext{s.baseCtx, values}
}

// activeStreams counts the SSE streams in progress.
type activeStreams struct{ sse, listen atomic.Int64 }

// track counts one stream until the returned func is called.
func (a *activeStreams) track(listen bool) func() {
	n := &a.sse
	if listen {
		n = &a.listen
	}
	n.Add(1)
	return func() { n.Add(-1) }
}

// ActiveStreams reports the SSE streams in progress: answers and
// 2025-11-25 GET streams (sse), and 2026-07-28 subscriptions/listen
// streams (listen).
func (s *Server) ActiveStreams() (sse, listen int64) {
	return s.active.sse.Load(), s.active.listen.Load()
}

// Sessions reports the 2025-11-25 sessions this node holds in memory.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}
