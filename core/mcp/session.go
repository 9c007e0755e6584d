package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
	"github.com/mcpblob/mcpblob/core/token"
)

// session is the node-local state of a 2025-11-25 session. The session id
// is a signed token (purpose mcp-session, bound to the principal, carrying
// the negotiated version), so any node can validate it and rebuild this
// state lazily (client capabilities up to maxCapsInSession bytes travel in
// the id); what a rebuilt session loses is node-local: the log level,
// resource subscriptions, the GET stream and pending server-to-client
// requests (load balancers hash on Mcp-Session-Id to keep those on one node).
// A DELETE revokes the id on the node that receives it only.
// maxCapsInSession bounds the client capabilities copied into a session id.
const maxCapsInSession = 512

type session struct {
	srv     *Server
	id      string
	version string
	caps    json.RawMessage
	expires time.Time

	mu        sync.Mutex
	logLevel  int
	subs      map[string]bool
	getStream bool
	outbox    chan []byte
	pending   map[string]chan *jsonrpc.Message
	nextID    int64
	inflight  map[string]context.CancelFunc
	cancelled map[string]bool
	lastSeen  time.Time
	streams   sse.Streams // resumable SSE streams (SEP-1699)
	done      chan struct{}
	closed    bool
}

func (s *Server) newSession(id, version string, caps json.RawMessage, expires time.Time) *session {
	if caps == nil {
		caps = json.RawMessage("{}")
	}
	return &session{
		srv: s, id: id, version: version, caps: caps, expires: expires,
		subs: map[string]bool{}, outbox: make(chan []byte, 64),
		pending: map[string]chan *jsonrpc.Message{}, inflight: map[string]context.CancelFunc{},
		cancelled: map[string]bool{}, lastSeen: time.Now(), done: make(chan struct{}),
	}
}

// initialize answers the initialize request and mints a session.
func (s *Server) initialize(r *Request, w ResponseWriter, msg *jsonrpc.Message) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			writeError(w, msg.ID, jsonrpc.InvalidParams("Invalid params: %v", err))
			return
		}
	}
	ver := p.ProtocolVersion
	if !legacyVersions[ver] {
		ver = Version20251125
	}
	exp := time.Now().Add(s.opts.SessionTTL)
	caps := p.Capabilities
	if len(caps) == 0 || caps[0] != '{' {
		caps = nil
	}
	claims := token.Claims{Purpose: token.PurposeSession, Principal: r.Principal, Object: ver, Expires: exp}
	if len(caps) <= maxCapsInSession {
		// Small capability objects ride in the signed id, so a node that
		// rebuilds the session still knows them.
		claims.Data = caps
	}
	sid, err := s.keyring.Sign(claims)
	if err != nil {
		writeError(w, msg.ID, s.toError(&Call{method: "initialize"}, err))
		return
	}
	sess := s.newSession(sid, ver, caps, exp)
	s.mu.Lock()
	s.sessions[sid] = sess
	s.created++
	if s.created%256 == 0 {
		s.sweepLocked()
	}
	s.mu.Unlock()

	res := Object{
		"protocolVersion": ver,
		"capabilities":    s.capabilities(false, caps),
		"serverInfo":      s.serverInfo(),
	}
	if s.opts.Instructions != "" {
		res["instructions"] = s.opts.Instructions
	}
	b, err := json.Marshal(res)
	if err != nil {
		panic("bug: initialize result does not marshal")
	}
	w.SetStatus(http.StatusOK)
	w.SetHeader("Content-Type", "application/json")
	w.SetHeader(headers.SessionID, sid)
	w.SetBody(jsonrpc.Envelope(msg.ID, b))
}

// lookupSession validates sid for principal and returns its state.
func (s *Server) lookupSession(sid, principal string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, gone := s.revoked[sid]; gone {
		return nil
	}
	if sess := s.sessions[sid]; sess != nil {
		if time.Now().After(sess.expires) {
			return nil
		}
		// The principal is inside the signed id: compare it again.
		if c, err := s.keyring.Verify(sid, token.PurposeSession); err != nil || c.Principal != principal {
			return nil
		}
		sess.mu.Lock()
		sess.lastSeen = time.Now()
		sess.mu.Unlock()
		return sess
	}
	c, err := s.keyring.Verify(sid, token.PurposeSession)
	if err != nil || c.Principal != principal || !legacyVersions[c.Object] {
		return nil
	}
	var caps json.RawMessage
	if len(c.Data) > 0 && json.Valid(c.Data) {
		caps = c.Data
	}
	sess := s.newSession(sid, c.Object, caps, c.Expires)
	s.sessions[sid] = sess
	return sess
}

// endSession revokes a session (DELETE) and ends its streams.
func (s *Server) endSession(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.revoked[sess.id] = sess.expires
	s.mu.Unlock()
	sess.close()
}

// sweepLocked drops sessions idle for an hour and expired revocations.
func (s *Server) sweepLocked() {
	now := time.Now()
	for id, sess := range s.sessions {
		sess.mu.Lock()
		idle := now.Sub(sess.lastSeen) > time.Hour && !sess.getStream && len(sess.inflight) == 0
		sess.mu.Unlock()
		if idle || now.After(sess.expires) {
			delete(s.sessions, id)
		}
	}
	for id, exp := range s.revoked {
		if now.After(exp) {
			delete(s.revoked, id)
		}
	}
}

func (sess *session) close() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if !sess.closed {
		sess.closed = true
		close(sess.done)
		for _, cancel := range sess.inflight {
			cancel()
		}
	}
}

func (sess *session) level() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.logLevel
}

func (sess *session) newPending() (int64, chan *jsonrpc.Message) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.nextID++
	id := sess.nextID
	ch := make(chan *jsonrpc.Message, 1)
	sess.pending[jsonrpc.IDKey(json.RawMessage(jsonInt(id)))] = ch
	return id, ch
}

func (sess *session) dropPending(id int64) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	delete(sess.pending, jsonrpc.IDKey(json.RawMessage(jsonInt(id))))
}

// deliver routes a client's response to the waiting server request.
func (sess *session) deliver(m *jsonrpc.Message) {
	sess.mu.Lock()
	ch := sess.pending[jsonrpc.IDKey(m.ID)]
	sess.mu.Unlock()
	if ch != nil {
		m.Files.Keep() // the waiting request owns them now
		select {
		case ch <- m:
		default:
			m.Files.Discard()
		}
	}
}

func (sess *session) track(id json.RawMessage, cancel context.CancelFunc) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.inflight[jsonrpc.IDKey(id)] = cancel
}

func (sess *session) untrack(id json.RawMessage) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	delete(sess.inflight, jsonrpc.IDKey(id))
	delete(sess.cancelled, jsonrpc.IDKey(id))
}

func (sess *session) wasCancelled(id json.RawMessage) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.cancelled[jsonrpc.IDKey(id)]
}

// notification handles a client notification.
func (sess *session) notification(method string, params map[string]json.RawMessage) {
	switch method {
	case "notifications/cancelled":
		raw, ok := params["requestId"]
		if !ok {
			return
		}
		k := jsonrpc.IDKey(raw)
		sess.mu.Lock()
		cancel := sess.inflight[k]
		if cancel != nil {
			sess.cancelled[k] = true
		}
		sess.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		// notifications/initialized, roots/list_changed, progress: nothing to do.
	}
}

func (sess *session) claimGetStream() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.getStream || sess.closed {
		return false
	}
	sess.getStream = true
	return true
}

func (sess *session) releaseGetStream() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.getStream = false
}

func (sess *session) subscribed(uri string) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.subs[uri]
}

// runGetStream serves the standalone GET stream until the client leaves, the
// session ends or the server closes.
func (sess *session) runGetStream(out *sse.Writer) error {
	events, unsubscribe := sess.srv.hub.Subscribe()
	defer unsubscribe()
	tick := time.NewTicker(sess.srv.opts.KeepAlive)
	defer tick.Stop()
	if err := out.Comment(); err != nil {
		return err
	}
	for {
		var err error
		select {
		case <-sess.done:
			return nil
		case <-sess.srv.baseCtx.Done():
			return nil
		case m := <-sess.outbox:
			err = out.Event(m)
		case ev := <-events:
			if msg := sess.srv.legacyEventMessage(sess, ev); msg != nil {
				err = out.Event(msg)
			}
		case <-tick.C:
			err = out.Comment()
		}
		if err != nil {
			return err
		}
	}
}

// legacyEventMessage turns a hub event into the notification a 2025-11-25
// session should see, or nil.
func (s *Server) legacyEventMessage(sess *session, ev Event) []byte {
	switch ev.Kind {
	case ResourceUpdated:
		if sess.subscribed(ev.URI) {
			return jsonrpc.EncodeNotification("notifications/resources/updated", Object{"uri": ev.URI})
		}
	case ResourceListChanged:
		return jsonrpc.EncodeNotification("notifications/resources/list_changed", nil)
	case ToolListChanged:
		return jsonrpc.EncodeNotification("notifications/tools/list_changed", nil)
	case PromptListChanged:
		if len(s.prompts) > 0 {
			return jsonrpc.EncodeNotification("notifications/prompts/list_changed", nil)
		}
	}
	return nil
}

func jsonInt(n int64) []byte {
	b, _ := json.Marshal(n)
	return b
}
