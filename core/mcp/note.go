package mcp

import (
	"context"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/observe"
)

// Note is what the endpoint reports about a request (package observe).
type Note = observe.Note

// Eras of Note.Era.
const (
	EraSession   = Version20251125
	EraStateless = VersionModern
)

// notedWriter carries a noted request's Note to writeError, which marks it.
type notedWriter struct {
	ResponseWriter
	note *Note
}

// transportWriter is the transport's own writer under a notedWriter, for
// its optional extensions (resstream.BodySender: the sendfile path).
func transportWriter(w ResponseWriter) ResponseWriter {
	if nw, ok := w.(notedWriter); ok {
		return nw.ResponseWriter
	}
	return w
}

// noteError marks w's note, if any, with a JSON-RPC error.
func noteError(w ResponseWriter) {
	if nw, ok := w.(notedWriter); ok {
		nw.note.Outcome = observe.OutcomeError
	}
}

// noteRequest records a JSON-RPC request's method, era and _meta on its
// note: only methods the server offers, so the values stay bounded. It returns
// w carrying the note, so an error answer marks it (noteError); the other
// messages and requests (GET, DELETE) are never marked.
func (s *Server) noteRequest(r *Request, w ResponseWriter, msg *jsonrpc.Message, modern bool) ResponseWriter {
	n := r.Note
	if n == nil {
		return w
	}
	n.Era, n.Method, n.Outcome, n.Meta = EraSession, "other", observe.OutcomeOK, observe.TraceMeta(msg.Meta)
	if modern {
		n.Era = EraStateless
	}
	if s.offered(msg.Method) != nil || msg.Method == "initialize" {
		n.Method = msg.Method
	}
	return notedWriter{w, n}
}

// noteTool records the tool a tools/call found; noteResult marks a tool's
// isError result.
func noteTool(c *Call, t *tool) {
	if c.note != nil {
		c.note.Tool = t.Name
	}
}

func noteResult(c *Call, v any) {
	if tr, ok := v.(*ToolResult); ok && tr.IsError && c.note != nil {
		c.note.Outcome = observe.OutcomeToolError
	}
}

// callContext is the context a call's work runs under: the server's, with
// the request's values.
func (s *Server) callContext(c *Call) (context.Context, context.CancelFunc) {
	return context.WithCancel(observe.WithValues(s.baseCtx, c.values))
}

// ActiveStreams reports the SSE streams in progress (observe.Streams).
func (s *Server) ActiveStreams() (sse, listen int64) { return s.active.Load() }

// Sessions reports the 2025-11-25 sessions this node holds in memory.
func (s *Server) Sessions() int {
	return s.sessions.Len()
}
