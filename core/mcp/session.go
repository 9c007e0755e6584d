package mcp

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
	"github.com/mcpblob/mcpblob/core/token"
)

// A 2025-11-25 session's state (package session) is node-local. The
// session id is a signed token (purpose mcp-session, bound to the principal,
// carrying the negotiated version), so any node can validate it and rebuild
// the state lazily (client capabilities up to maxCapsInSession bytes travel
// in the id); what a rebuilt session loses is node-local: the log level,
// resource subscriptions, the GET stream and pending server-to-client
// requests (load balancers hash on Mcp-Session-Id to keep those on one node).
// A DELETE revokes the id on the node that receives it only.

// maxCapsInSession bounds the client capabilities copied into a session id.
const maxCapsInSession = 512

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
	sess := session.New(sid, ver, caps, exp)
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
func (s *Server) lookupSession(sid, principal string) *session.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked.Has(sid) {
		return nil
	}
	if sess := s.sessions[sid]; sess != nil {
		if time.Now().After(sess.Expires) {
			return nil
		}
		// The principal is inside the signed id: compare it again.
		if c, err := s.keyring.Verify(sid, token.PurposeSession); err != nil || c.Principal != principal {
			return nil
		}
		sess.Touch()
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
	sess := session.New(sid, c.Object, caps, c.Expires)
	s.sessions[sid] = sess
	return sess
}

// endSession revokes a session (DELETE) and ends its streams.
func (s *Server) endSession(sess *session.State) {
	s.mu.Lock()
	delete(s.sessions, sess.ID)
	forgot := s.revoked.Add(sess.ID, sess.Expires, time.Now())
	s.mu.Unlock()
	if forgot > 0 {
		s.log.Warn("mcp: too many ended sessions to remember; the soonest-expiring ids were forgotten", "forgot", forgot, "limit", session.MaxRevoked)
	}
	sess.Close()
}

// sweepLocked drops sessions idle for an hour and expired revocations.
func (s *Server) sweepLocked() {
	now := time.Now()
	for id, sess := range s.sessions {
		if sess.Idle(now) || now.After(sess.Expires) {
			delete(s.sessions, id)
		}
	}
	s.revoked.Sweep(now)
}

// runGetStream serves the standalone GET stream until the client leaves, the
// session ends or the server closes.
func (s *Server) runGetStream(sess *session.State, out *sse.Writer, audience string) error {
	events, unsubscribe := s.hub.Subscribe(audience)
	defer unsubscribe()
	defer s.active.track(false)()
	tick := time.NewTicker(s.opts.KeepAlive)
	defer tick.Stop()
	if err := out.Comment(); err != nil {
		return err
	}
	for {
		var err error
		select {
		case <-sess.Done():
			return nil
		case <-s.baseCtx.Done():
			return nil
		case m := <-sess.Outbox():
			err = out.Event(m)
		case ev := <-events:
			if msg := s.legacyEventMessage(sess, ev); msg != nil {
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
func (s *Server) legacyEventMessage(sess *session.State, ev Event) []byte {
	switch ev.Kind {
	case ResourceUpdated:
		if sess.Subscribed(ev.URI) {
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
