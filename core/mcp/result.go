package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mcpblob/mcpblob/core/mcp/contents"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
)

// result is a method's answer, ready for the envelope: an encoded result
// object, a streamed resources/read body, or a resources/stream answer that
// goes out without an envelope.
type result struct {
	json []byte
	body *contents.Body
	raw  *resstream.Answer
}

func (r *result) close() {
	if r != nil && r.body != nil {
		r.body.Close()
	}
	if r != nil && r.raw != nil && r.raw.Body != nil {
		r.raw.Body.Close()
	}
}

// invoke runs the method and returns its result; 2026-07-28 results get
// resultType, serverInfo and cache hints here.
func (s *Server) invoke(c *Call, m *method) (res *result, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp: handler panic", "method", c.method, "panic", p)
			res, err = nil, jsonrpc.NewError(CodeInternalError, "Internal error", nil)
		}
	}()
	v, err := m.run(c)
	if err != nil {
		return nil, err
	}
	noteResult(c, v)
	switch v := v.(type) {
	case *contents.Body:
		return &result{body: v}, nil
	case *resstream.Answer:
		if v.DownloadURL == "" {
			return &result{raw: v}, nil
		}
	}
	b, err := s.encodeResult(c, m, v)
	if err != nil {
		return nil, fmt.Errorf("mcp: encode %s result: %w", c.method, err)
	}
	return &result{json: b}, nil
}

// encodeResult encodes a result object (an Object, or an encodedResult
// with one member encoded once).
func (s *Server) encodeResult(c *Call, m *method, v any) ([]byte, error) {
	var pre *encodedResult
	switch e := v.(type) {
	case encodedWhole:
		if !c.modern { // nothing to add: the bytes are the result
			return e, nil
		}
		return nil, errors.New("mcp: a whole encoded result in the 2026-07-28 era")
	case encodedResult:
		v, pre = e.rest, &e
	case *resstream.Answer:
		v = Object{"uri": e.URI, "mimeType": e.MIMEType, "size": e.Size, "downloadUrl": e.DownloadURL}
	}
	o, _ := v.(Object)
	if o == nil {
		o = Object{}
	}
	if c.modern {
		s.addModernFields(c, m, o)
	}
	if pre != nil {
		return pre.encode(o)
	}
	return json.Marshal(o)
}

func (s *Server) addModernFields(c *Call, m *method, o Object) {
	if _, ok := o["resultType"]; !ok {
		o["resultType"] = "complete"
	}
	meta, _ := o["_meta"].(Object)
	if meta == nil {
		meta = Object{}
	}
	meta[metaServerInfo] = s.serverInfo()
	o["_meta"] = meta
	if m.cache && o["resultType"] == "complete" {
		s.addCacheHints(o)
	}
}

// encodedWhole is a complete result object encoded once, for a 2025-era
// call that adds nothing to it (tools/list); it is shared, never changed.
type encodedWhole []byte

// encodedResult is a result with one large, unchanging member encoded
// once (tools/list's tools); rest holds the other members, to which invoke
// adds the 2026-07-28 fields.
type encodedResult struct {
	name  string
	value []byte // JSON
	rest  Object
}

// encode returns the result object with keys in json.Marshal's (sorted)
// order, the encoded member among them.
func (e *encodedResult) encode(o Object) ([]byte, error) {
	return jsonrpc.EncodeObject(o, e.name, e.value)
}

func (s *Server) addCacheHints(o Object) {
	o["ttlMs"] = s.opts.CacheTTL.Milliseconds()
	o["cacheScope"] = "private"
}

// toError maps a handler error to a JSON-RPC error; internal detail is
// logged, not sent. A call ended by its client's cancel or departure is
// routine and logged at debug.
func (s *Server) toError(c *Call, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if c.ctx != nil && c.ctx.Err() != nil && s.baseCtx.Err() == nil &&
		(errors.Is(err, context.Canceled) || c.out != nil && c.out.Failed() != nil) {
		s.log.Debug("mcp: request ended by the client", "method", c.method, "err", err)
	} else {
		s.log.Error("mcp: request failed", "method", c.method, "err", err)
	}
	return jsonrpc.NewError(CodeInternalError, "Internal error", nil)
}

// respond runs the call and writes its response: raw (resources/stream),
// JSON, or an SSE stream (resumable in 2025-11-25 sessions that allow it).
func (s *Server) respond(w ResponseWriter, c *Call, m *method, acc headers.Accept) {
	switch {
	case m.raw:
		s.respondOnce(w, c, m, true)
	case !acc.SSE || acc.JSON && (m.stream == nil || !m.stream(c)):
		s.respondOnce(w, c, m, false)
	case c.sess != nil && resumable(c.sess):
		s.respondResumable(w, c, m)
	default:
		s.respondSSE(w, c, m)
	}
}

// respondOnce answers with one JSON body (or, raw, a resources/stream
// answer). The call's context lives until the body has been written: a
// storage reader may be bound to it.
func (s *Server) respondOnce(w ResponseWriter, c *Call, m *method, raw bool) {
	ctx, cancel := s.callContext(c)
	c.ctx = ctx
	res, err := s.invoke(c, m)
	if err != nil {
		cancel()
		writeError(w, c.id, s.toError(c, err))
		return
	}
	if raw && res.raw != nil {
		writeStreamAnswer(w, res.raw, cancel)
		return
	}
	w.SetStatus(http.StatusOK)
	w.SetHeader("Content-Type", "application/json")
	if res.body == nil {
		cancel()
		setEnvelope(w, c.id, res.json)
		return
	}
	prefix := jsonrpc.ResponsePrefix(c.id)
	w.SetBodyStream(int64(len(prefix))+res.body.Size()+1, func(sw StreamWriter) error {
		defer cancel()
		defer res.body.Close()
		if _, err := sw.Write(prefix); err != nil {
			return err
		}
		if err := res.body.Encode(sw); err != nil {
			return err
		}
		_, err := sw.Write([]byte{'}'})
		return err
	})
}

// eventSink carries a call's SSE messages: a connection (*sse.Writer) or a
// resumable stream (*sse.Stream).
type eventSink interface {
	Event(msg []byte) error
	Comment() error
	Failed() error
	// Finish sends the call's final message (nil: none) and ends the
	// stream; FinishBody sends a streamed result instead.
	Finish(msg []byte)
	FinishBody(prefix []byte, body func(io.Writer) error)
}

// setEnvelope sends the result response with id around result, copied
// into the transport's reused body buffer when it is a PartsWriter.
func setEnvelope(w ResponseWriter, id json.RawMessage, result []byte) {
	if pw, ok := transportWriter(w).(PartsWriter); ok {
		pw.SetBodyParts(jsonrpc.ResponsePrefix(id), result, jsonrpc.EnvelopeEnd)
	} else {
		w.SetBody(jsonrpc.Envelope(id, result))
	}
}

func setSSEHeaders(w ResponseWriter) {
	w.SetStatus(http.StatusOK)
	w.SetHeader("Content-Type", "text/event-stream")
	w.SetHeader("Cache-Control", "no-cache")
	w.SetHeader("X-Accel-Buffering", "no")
}

// respondSSE answers on a plain SSE stream.
func (s *Server) respondSSE(w ResponseWriter, c *Call, m *method) {
	setSSEHeaders(w)
	c.files.Keep() // the call outlives handlePost: runStream releases them
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		ctx, cancel := s.callContext(c)
		defer cancel()
		out := sse.NewWriter(sw, cancel)
		s.runStream(c, m, out, ctx, cancel)
		return nil
	})
}

// minResumeVersion is the first protocol version whose SSE streams are
// resumable (SEP-1699).
const minResumeVersion = Version20251125

// resumable reports whether the session's SSE streams are resumable.
func resumable(sess *session.State) bool { return sess.Version >= minResumeVersion }

// respondResumable answers a 2025-11-25 request with a resumable SSE stream.
func (s *Server) respondResumable(w ResponseWriter, c *Call, m *method) {
	rs := c.sess.Streams.New(s.baseCtx, c.sess.Done())
	setSSEHeaders(w)
	c.files.Keep() // the call outlives handlePost: runStream releases them
	var once sync.Once
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		rel := rs.Attach(sse.NewWriter(sw, nil), 0, true)
		once.Do(func() {
			go func() {
				ctx, cancel := s.callContext(c)
				defer cancel()
				s.runStream(c, m, rs, ctx, cancel)
			}()
		})
		rs.Serve(rel)
		return nil
	})
}

// runStream runs a call whose messages go to out and sends its final
// message there; a call the client cancelled gets none.
func (s *Server) runStream(c *Call, m *method, out eventSink, ctx context.Context, cancel context.CancelFunc) {
	defer c.release()
	defer s.active.Track(c.method == "subscriptions/listen")()
	c.ctx, c.out = ctx, out
	if c.sess != nil {
		c.sess.Track(c.id, cancel)
		defer c.sess.Untrack(c.id)
	}
	// Comment lines keep idle proxies from cutting a long call (a tool
	// waiting for the client, say) and detect a client that went away
	// (in 2026-07-28 that is the cancellation).
	stopKeepAlive := sse.KeepAlive(out, s.opts.KeepAlive)
	res, err := s.invoke(c, m)
	stopKeepAlive()
	switch {
	case c.sess != nil && c.sess.WasCancelled(c.id):
		res.close()
		out.Finish(nil)
	case err != nil:
		out.Finish(jsonrpc.EncodeError(c.id, s.toError(c, err)))
	case res.body != nil:
		out.FinishBody(jsonrpc.ResponsePrefix(c.id), res.body.Encode)
		res.body.Close()
	default:
		out.Finish(jsonrpc.Envelope(c.id, res.json))
	}
}
