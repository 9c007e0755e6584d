package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// obj is a small JSON object built by handlers; encoding/json sorts its keys,
// which keeps transcripts stable.
type obj = map[string]any

// method describes one JSON-RPC method.
type method struct {
	legacy, modern bool
	// cache marks results that carry ttlMs/cacheScope in 2026-07-28.
	cache bool
	// precheck runs before the response mode is chosen; its errors are
	// sent as standalone responses with their HTTP status.
	precheck func(c *call) *Error
	// stream reports whether the response should be an SSE stream (when
	// the client accepts one).
	stream func(c *call) bool
	run    func(c *call) (any, error)
	// raw marks resources/stream: never SSE, and the result may be raw
	// bytes or a redirect (resstream.go).
	raw bool
}

// call is one incoming request being served.
type call struct {
	srv           *Server
	ctx           context.Context
	modern        bool
	version       string
	id            json.RawMessage
	method        string
	params        map[string]json.RawMessage
	caps          json.RawMessage // client capabilities object
	principal     string
	header        Header
	sess          *session // 2025-11-25 only
	progressToken json.RawMessage
	logLevel      int       // modern: -1 = no logs
	out           eventSink // nil for JSON responses
	tool          *tool
	task          *task                      // set while running as a task
	args          map[string]json.RawMessage // tools/call arguments
	files         *fileSet                   // strings taken out of the message (reader.go)
}

// param decodes params[name] into v; absent leaves v unchanged.
func (c *call) param(name string, v any) *Error {
	raw, ok := c.params[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalidParams("Invalid params: %s: %v", name, err)
	}
	return nil
}

// hasCap reports whether the client declared capability name.
func (c *call) hasCap(name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(c.caps, &m) != nil {
		return false
	}
	v, ok := m[name]
	return ok && string(v) != "null" && string(v) != "false"
}

func (c *call) send(msg []byte) {
	if c.out != nil {
		_ = c.out.event(msg)
	}
}

// notify sends a notification related to this request on its SSE stream.
func (c *call) notify(method string, params any) {
	if c.out == nil {
		return
	}
	c.send(encodeNotification(method, params))
}

// progress reports progress when the client asked for it.
func (c *call) progress(progress, total float64, message string) {
	if c.progressToken == nil || c.out == nil {
		return
	}
	p := obj{"progressToken": c.progressToken, "progress": progress}
	if total > 0 {
		p["total"] = total
	}
	if message != "" {
		p["message"] = message
	}
	c.notify("notifications/progress", p)
}

var logLevels = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// logf sends a notifications/message when the client's level admits it.
func (c *call) logf(level, logger string, data any) {
	n, ok := logLevels[level]
	if !ok {
		panic("bug: unknown log level " + level)
	}
	min := c.logLevel
	if c.sess != nil {
		min = c.sess.level()
	}
	if min < 0 || n < min {
		return
	}
	p := obj{"level": level, "data": data}
	if logger != "" {
		p["logger"] = logger
	}
	c.notify("notifications/message", p)
}

// errNoStream is returned by request when no stream can carry it.
var errNoStream = errors.New("mcp: no stream to carry a server-to-client request")

// request sends a server-to-client request on this request's SSE stream
// (2025-11-25 only) and waits for the client's answer.
func (c *call) request(method string, params any) (json.RawMessage, error) {
	m, err := c.requestMsg(method, params, nil)
	if err != nil {
		return nil, err
	}
	m.files.discard()
	return m.Result, nil
}

// requestMsg is request returning the whole answer; the caller owns
// m.files and discards them. sent, when set, learns the request id before
// the request goes out.
func (c *call) requestMsg(method string, params any, sent func(id int64)) (*message, error) {
	if c.sess == nil || c.out == nil {
		return nil, errNoStream
	}
	id, ch := c.sess.newPending()
	defer c.sess.dropPending(id)
	if sent != nil {
		sent(id)
	}
	if err := c.out.event(encodeRequest(id, method, params)); err != nil {
		return nil, err
	}
	t := time.NewTimer(c.srv.opts.ClientTimeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Error != nil {
			m.files.discard()
			var e Error
			_ = json.Unmarshal(m.Error, &e)
			return nil, fmt.Errorf("mcp: client answered %s with error %d: %s", method, e.Code, e.Message)
		}
		return m, nil
	case <-c.ctx.Done():
		return nil, c.ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("mcp: no answer to %s within %v", method, c.srv.opts.ClientTimeout)
	}
}

// eventSink carries a call's SSE messages: a connection (*sse) or a
// resumable stream (*resumable).
type eventSink interface {
	event(msg []byte) error
	comment() error
	failed() error
}

// callContext is the context of one call; Close cancels them all.
func (s *Server) callContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(s.baseCtx)
}

// bodyResult is a result written without encoding/json (a blob read). size
// is the exact byte length of the result object, or -1.
type bodyResult interface {
	size() int64
	writeTo(w io.Writer) error
	close()
}

// respond runs the call and writes its response as JSON or as SSE.
func (s *Server) respond(w ResponseWriter, c *call, m *method, acc acceptance) {
	if m.raw {
		s.respondRaw(w, c, m)
		return
	}
	useSSE := acc.sse && (!acc.json || (m.stream != nil && m.stream(c)))
	if !useSSE {
		var cancel context.CancelFunc
		c.ctx, cancel = context.WithCancel(s.baseCtx)
		res, err := s.invoke(c, m)
		if err != nil {
			cancel()
			writeError(w, c.id, s.toError(c, err))
			return
		}
		if br, ok := res.(bodyResult); ok {
			// The reader may be bound to c.ctx (S3): keep it alive
			// until the body has been written.
			prefix := appendResponsePrefix(nil, c.id)
			w.SetStatus(http.StatusOK)
			w.SetHeader("Content-Type", "application/json")
			w.SetBodyStream(int64(len(prefix))+br.size()+1, func(sw StreamWriter) error {
				defer cancel()
				defer br.close()
				if _, err := sw.Write(prefix); err != nil {
					return err
				}
				if err := br.writeTo(sw); err != nil {
					return err
				}
				_, err := sw.Write([]byte{'}'})
				return err
			})
			return
		}
		cancel()
		w.SetStatus(http.StatusOK)
		w.SetHeader("Content-Type", "application/json")
		w.SetBody(encodeResult(c.id, res.([]byte)))
		return
	}
	if c.sess != nil && c.sess.resumable() {
		s.respondResumable(w, c, m)
		return
	}
	setSSEHeaders(w)
	c.files.keep() // the call outlives handlePost: it releases them
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		defer c.files.discard()
		out := newSSE(sw)
		ctx, cancel := context.WithCancel(s.baseCtx)
		defer cancel()
		out.onFail = cancel
		c.ctx, c.out = ctx, out
		if c.sess != nil {
			c.sess.track(c.id, cancel)
			defer c.sess.untrack(c.id)
		}
		// Comment lines keep idle proxies from cutting a long call (a tool
		// waiting for the client, say) and detect a client that went away
		// (in 2026-07-28 that is the cancellation).
		stopKeepAlive := keepAlive(out, s.opts.KeepAlive)
		res, err := s.invoke(c, m)
		stopKeepAlive()
		if c.sess != nil && c.sess.wasCancelled(c.id) {
			if br, ok := res.(bodyResult); ok {
				br.close()
			}
			return nil // cancelled by the client: send nothing
		}
		if err != nil {
			return out.event(encodeError(c.id, s.toError(c, err)))
		}
		if br, ok := res.(bodyResult); ok {
			defer br.close()
			return out.bodyEvent(appendResponsePrefix(nil, c.id), br)
		}
		return out.event(encodeResult(c.id, res.([]byte)))
	})
}

// invoke runs the method and returns the encoded result object ([]byte) or
// a bodyResult.
func (s *Server) invoke(c *call, m *method) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp: handler panic", "method", c.method, "panic", p)
			res, err = nil, newError(CodeInternalError, "Internal error", nil)
		}
	}()
	v, err := m.run(c)
	if err != nil {
		return nil, err
	}
	if br, ok := v.(bodyResult); ok {
		return br, nil
	}
	if sr, ok := v.(*streamResult); ok {
		return sr, nil // resources/stream bytes or redirect (resstream.go)
	}
	var pre *encodedResult
	if e, ok := v.(encodedResult); ok {
		v, pre = e.rest, &e
	}
	o, _ := v.(obj)
	if o == nil {
		o = obj{}
	}
	if c.modern {
		if _, ok := o["resultType"]; !ok {
			o["resultType"] = "complete"
		}
		meta, _ := o["_meta"].(obj)
		if meta == nil {
			meta = obj{}
		}
		meta[metaServerInfo] = s.serverInfo()
		o["_meta"] = meta
		if m.cache && o["resultType"] == "complete" {
			s.addCacheHints(c, o)
		}
	}
	var b []byte
	if pre != nil {
		b, err = pre.encode(o)
	} else {
		b, err = json.Marshal(o)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: encode %s result: %w", c.method, err)
	}
	return b, nil
}

// encodedResult is a result with one large, unchanging member encoded
// once (tools/list's tools); rest holds the other members, to which invoke
// adds the 2026-07-28 fields.
type encodedResult struct {
	name  string
	value []byte // JSON
	rest  obj
}

// encode returns the result object with keys in json.Marshal's (sorted)
// order, the encoded member among them.
func (e *encodedResult) encode(o obj) ([]byte, error) {
	keys := append(slices.Sorted(maps.Keys(o)), e.name)
	slices.Sort(keys)
	out := append(make([]byte, 0, len(e.value)+256), '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k) // keys are plain ASCII names
		out = append(out, ':')
		if k == e.name {
			out = append(out, e.value...)
			continue
		}
		v, err := json.Marshal(o[k])
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

func (s *Server) addCacheHints(c *call, o obj) {
	o["ttlMs"] = s.opts.CacheTTL.Milliseconds()
	o["cacheScope"] = "private"
}

// toError maps a handler error to a JSON-RPC error; internal detail is
// logged, not sent.
func (s *Server) toError(c *call, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	s.log.Error("mcp: request failed", "method", c.method, "err", err)
	return newError(CodeInternalError, "Internal error", nil)
}

// sse writes Server-Sent Events; each event is one Write followed by a Flush.
type sse struct {
	mu     sync.Mutex
	w      StreamWriter
	err    error
	buf    []byte
	onFail func()
}

func newSSE(w StreamWriter) *sse { return &sse{w: w} }

// failed returns the write error that ended the stream, if any.
func (s *sse) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sse) fail(err error) error {
	if s.err == nil {
		s.err = err
		if s.onFail != nil {
			s.onFail()
		}
	}
	return err
}

// event writes one "message" event carrying msg (one JSON-RPC message
// without newlines).
func (s *sse) event(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.buf = append(s.buf[:0], "event: message\ndata: "...)
	s.buf = append(s.buf, msg...)
	s.buf = append(s.buf, "\n\n"...)
	if _, err := s.w.Write(s.buf); err != nil {
		return s.fail(err)
	}
	if err := s.w.Flush(); err != nil {
		return s.fail(err)
	}
	return nil
}

// bodyEvent writes a message whose result streams from br as one data line.
func (s *sse) bodyEvent(prefix []byte, br bodyResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	head := append([]byte("event: message\ndata: "), prefix...)
	if _, err := s.w.Write(head); err != nil {
		return s.fail(err)
	}
	if err := br.writeTo(s.w); err != nil {
		return s.fail(err)
	}
	if _, err := s.w.Write([]byte("}\n\n")); err != nil {
		return s.fail(err)
	}
	if err := s.w.Flush(); err != nil {
		return s.fail(err)
	}
	return nil
}

// raw writes pre-framed SSE bytes and flushes them.
func (s *sse) raw(frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write(frame); err != nil {
		return s.fail(err)
	}
	if err := s.w.Flush(); err != nil {
		return s.fail(err)
	}
	return nil
}

// keepAlive writes a comment to s every d until the returned function is
// called.
func keepAlive(s eventSink, d time.Duration) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if s.comment() != nil {
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// comment writes a keep-alive comment line; it also detects gone clients.
func (s *sse) comment() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write([]byte(": keep-alive\n\n")); err != nil {
		return s.fail(err)
	}
	if err := s.w.Flush(); err != nil {
		return s.fail(err)
	}
	return nil
}

func idKey(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s:" + s
		}
	}
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return "n:" + strconv.FormatInt(n, 10)
	}
	return "r:" + string(id)
}
