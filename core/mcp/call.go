package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpblob/mcpblob/core/mcp/clientcaps"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
	"github.com/mcpblob/mcpblob/core/mcp/tasks"
)

// method describes one JSON-RPC method.
type method struct {
	legacy, modern bool
	// cache marks results that carry ttlMs/cacheScope in 2026-07-28.
	cache bool
	// precheck runs before the response mode is chosen; its errors are
	// sent as standalone responses with their HTTP status.
	precheck func(c *Call) *Error
	// stream reports whether the response should be an SSE stream (when
	// the client accepts one).
	stream func(c *Call) bool
	run    func(c *Call) (any, error)
	// raw marks resources/stream: never SSE, and the answer may be raw
	// bytes or a redirect.
	raw bool
}

// Call is one request being served: what a handler may learn about it and
// its caller, and how it talks back (progress, logs, input requests). A
// Call is valid until its handler returns.
type Call struct {
	srv           *Server
	ctx           context.Context
	modern        bool
	version       string
	id            json.RawMessage
	method        string
	params        map[string]json.RawMessage
	meta          map[string]json.RawMessage
	caps          json.RawMessage // client capabilities object
	principal     string
	scopes        []string
	audience      string
	header        Header
	sess          *session.State // 2025-11-25 only
	progressToken json.RawMessage
	logLevel      int       // modern: -1 = no logs
	out           eventSink // nil for JSON responses
	tool          *tool
	task          *tasks.Task                // set while running as a task
	args          map[string]json.RawMessage // tools/call arguments
	files         *scan.Files                // strings taken out of the message
	state         json.RawMessage            // MRTR progress (input.go)
	answers       []*scan.Files              // files of 2025-11-25 input answers
	expected      []string                   // expectation keys (session.Expectations)
	// inputResponses, read once (input.go)
	inputLoaded bool
	responses   map[string]json.RawMessage
	inputErr    error
	note        *Note           // the request's, or nil (note.go)
	values      context.Context // the request's Context, or nil (note.go)
	listen      *listenRequest  // subscriptions/listen, read by its precheck
	cred        credential      // the request's credential (credential.go)
}

// Context is the call's context: cancelled when the client cancels or
// leaves (2026-07-28) and when the server closes.
func (c *Call) Context() context.Context { return c.ctx }

// Principal is the authenticated caller ("" on an open endpoint).
func (c *Call) Principal() string { return c.principal }

// Scopes are the scopes of the caller's credential (nil on an open endpoint).
func (c *Call) Scopes() []string { return c.scopes }

// Modern reports the stateless 2026-07-28 era.
func (c *Call) Modern() bool { return c.modern }

// ProtocolVersion is the negotiated protocol version.
func (c *Call) ProtocolVersion() string { return c.version }

// Capabilities is the client's capabilities object as sent.
func (c *Call) Capabilities() json.RawMessage { return c.caps }

// Arguments are the tools/call arguments (file inputs read "" here: use
// File).
func (c *Call) Arguments() map[string]json.RawMessage { return c.args }

// Param returns a member of the request's params, as sent.
func (c *Call) Param(name string) json.RawMessage { return c.params[name] }

// param decodes params[name] into v; absent leaves v unchanged.
func (c *Call) param(name string, v any) *Error {
	raw, ok := c.params[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.InvalidParams("Invalid params: %s: %v", name, err)
	}
	return nil
}

// HasCapability reports whether the client declared capability name.
func (c *Call) HasCapability(name string) bool { return clientcaps.Has(c.caps, name) }

// File returns the x-mcp-file argument name, decoded while it arrived (or,
// for a small value, now) and checked against its descriptor. A value the
// client must fix (absent, not a string, not a data URI, too large, a
// media type not accepted, refused by the FileSink) is a *[FileError]:
// return it as it is and the client gets an isError result naming the
// argument. Any other error is the server's (the spool or the sink
// failed): return it too, it is an internal error.
func (c *Call) File(name string) (*File, error) {
	spec := scan.FileSpec{MaxSize: c.srv.opts.MaxFileBytes}
	if c.tool != nil {
		if s, ok := c.tool.files[name]; ok {
			spec = s
		}
	}
	return fileValue(c, c.files, "/params/arguments/"+scan.PathElem(name), name, c.args[name], spec, false)
}

func (c *Call) send(msg []byte) {
	if c.out != nil {
		_ = c.out.Event(msg)
	}
}

// Notify sends a notification related to this call on its SSE stream (a
// no-op when the answer is plain JSON).
func (c *Call) Notify(method string, params any) {
	if c.out == nil {
		return
	}
	c.send(jsonrpc.EncodeNotification(method, params))
}

// Progress reports progress when the client asked for it.
func (c *Call) Progress(progress, total float64, message string) {
	if c.progressToken == nil || c.out == nil {
		return
	}
	p := Object{"progressToken": c.progressToken, "progress": progress}
	if total > 0 {
		p["total"] = total
	}
	if message != "" {
		p["message"] = message
	}
	c.Notify("notifications/progress", p)
}

var logLevels = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// Log sends a notifications/message when the client's level admits it.
// level is an RFC 5424 level name ("info", "warning"…).
func (c *Call) Log(level, logger string, data any) {
	n, ok := logLevels[level]
	if !ok {
		panic("mcp: Call.Log: unknown log level " + level)
	}
	min := c.logLevel
	if c.sess != nil {
		min = c.sess.LogLevel()
	}
	if min < 0 || n < min {
		return
	}
	p := Object{"level": level, "data": data}
	if logger != "" {
		p["logger"] = logger
	}
	c.Notify("notifications/message", p)
}

// errNoStream is returned by request when no stream can carry it.
var errNoStream = errors.New("mcp: no stream to carry a server-to-client request")

// request sends a server-to-client request on this call's SSE stream
// (2025-11-25 only) and waits for the client's answer; the caller owns
// the answer's files. sent, when set, learns the request id before the
// request goes out. While it waits the request holds one unit of the
// pending budget; over the budget it is not sent and the error is the
// limit's (*Error, -32029).
func (c *Call) request(method string, params any, sent func(id int64)) (*jsonrpc.Message, error) {
	if c.sess == nil || c.out == nil {
		return nil, errNoStream
	}
	release, err := c.HoldPending()
	if err != nil {
		return nil, err
	}
	defer release()
	return c.sess.Ask(c.ctx, method, params, c.srv.opts.ClientTimeout, c.out.Event, sent)
}

// HoldPending charges a wait for the client to the pending budget
// (Limits.PendingPerPrincipal, Limits.Pending): a server-to-client request
// or a task's input round (done by Input), or what a handler waits for
// after one (the upload of an accepted URL-mode elicitation). Call release
// exactly once, however the wait ends. Over the budget it takes nothing and
// returns the limit's error (an *Error, -32029): return it as it is.
func (c *Call) HoldPending() (release func(), err error) {
	pool := c.srv.budgets.Pending
	if err := pool.Take(c.principal, 1); err != nil {
		return nil, limits.Refusal(err, "server-to-client requests waiting for the client's answer")
	}
	return func() { pool.Give(c.principal, 1) }, nil
}

// release frees what the call still holds once its answer is out.
func (c *Call) release() {
	c.files.Discard()
	for _, f := range c.answers {
		f.Discard()
	}
}

// nameParam is params.name (tools/call, prompts/get).
func (c *Call) nameParam() string {
	n, _ := jsonrpc.StringParam(c.params, "name")
	return n
}

// CloseSSEConnection ends the current connection of a resumable 2025-11-25
// SSE stream and keeps the call running: the client reconnects with
// Last-Event-ID and gets what it missed (SEP-1699 polling). Elsewhere it
// does nothing.
func (c *Call) CloseSSEConnection() {
	if rs, ok := c.out.(*sse.Stream); ok {
		rs.CloseConnection()
	}
}
