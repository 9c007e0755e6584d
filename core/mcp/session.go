package mcp

import (
	"context"
	"encoding/json"
	"errors"
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
// A DELETE revokes the id on the node that receives it and, with
// Options.SessionEnds, in the record every node shares: each request of a
// session then asks that record, so another node refuses the id at its very
// next request (the local revocations are a cache of ended ids only).

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
	exp := time.Now().Add(s.opts.SessionTTL).Truncate(time.Second) // as the signed id carries it
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
	sess.Principal = r.Principal
	s.sessions.Add(sess)

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

// SessionEnds records ended 2025-11-25 sessions where every node sharing
// it sees them ([Options.SessionEnds]). A session id is a credential: an
// implementation must store a digest of it, never the id itself, and must
// not log it. expires is the session's expiry, in whole seconds and the
// same on every node; the end matters until then. Implementations must be
// safe for concurrent use.
type SessionEnds interface {
	// EndSession records that session id ended; ErrSessionEnded when its
	// end was already recorded (an earlier DELETE, on any node).
	EndSession(ctx context.Context, id string, expires time.Time) error
	// SessionEnded reports whether the end of session id is recorded,
	// asking the shared record every time: no cache of "not ended".
	SessionEnded(ctx context.Context, id string, expires time.Time) (bool, error)
}

// ErrSessionEnded is what [SessionEnds.EndSession] returns when the
// session's end was already recorded.
var ErrSessionEnded = errors.New("mcp: session already ended")

// sessionNotFound answers an unknown, expired, foreign or ended session
// (SPEC.md §2.1: the client then initializes a new one).
func sessionNotFound() *Error {
	return jsonrpc.NewError(CodeSessionNotFound, "Session not found", nil).WithStatus(http.StatusNotFound)
}

// sessionStoreFailed answers a request whose session could not be checked
// against, or ended in, Options.SessionEnds: neither a 404 nor a success.
func (s *Server) sessionStoreFailed(op string, err error) *Error {
	s.log.Error("mcp: the shared record of ended sessions failed", "op", op, "err", err)
	return jsonrpc.NewError(CodeInternalError, "Service unavailable: the session cannot be checked right now; try again", nil).
		WithStatus(http.StatusServiceUnavailable)
}

// lookupSession validates sid for principal and returns its state, or the
// error to answer: 404 for a session that is not (or no longer) valid, 503
// when Options.SessionEnds could not be asked. The session table's lock is
// not held while SessionEnds is asked, and the question outlives Close (a
// request served during a graceful shutdown still gets its answer).
func (s *Server) lookupSession(sid, principal string) (*session.State, *Error) {
	sess := s.sessions.Known(sid, principal) // a verified id: no HMAC again
	if sess == nil {
		c, e := s.verifySession(sid, principal)
		if e != nil {
			return nil, e
		}
		if sess = s.localSession(sid, c); sess == nil {
			return nil, sessionNotFound()
		}
	}
	if s.opts.SessionEnds == nil {
		return sess, nil
	}
	ended, err := s.opts.SessionEnds.SessionEnded(context.Background(), sid, sess.Expires)
	switch {
	case err != nil:
		return nil, s.sessionStoreFailed("check", err)
	case ended: // on another node: end it here too
		s.revokeSession(sid, sess.Expires)
		return nil, sessionNotFound()
	}
	return sess, nil
}

// verifySession checks sid's signature, expiry and principal.
func (s *Server) verifySession(sid, principal string) (token.Claims, *Error) {
	// The principal is inside the signed id: compare it on every request.
	c, err := s.keyring.Verify(sid, token.PurposeSession)
	if err != nil || c.Principal != principal || !legacyVersions[c.Object] {
		return c, sessionNotFound()
	}
	return c, nil
}

// localSession returns the state of the verified session sid, rebuilding
// it from the id's claims c when this node has none; nil when it was
// revoked here.
func (s *Server) localSession(sid string, c token.Claims) *session.State {
	return s.sessions.Get(sid, func() *session.State {
		var caps json.RawMessage
		if len(c.Data) > 0 && json.Valid(c.Data) {
			caps = c.Data
		}
		sess := session.New(sid, c.Object, caps, c.Expires)
		sess.Principal = c.Principal
		return sess
	})
}

// endSession ends session sid (DELETE): it records the end through
// Options.SessionEnds, when set, so every node refuses the id, and revokes
// it here whatever the record said. nil means the end is recorded by this
// call; 404 when the session had already ended (here, or elsewhere by the
// record); 503 when the record failed.
func (s *Server) endSession(sid string, exp time.Time) *Error {
	if s.opts.SessionEnds == nil {
		if !s.revokeSession(sid, exp) {
			return sessionNotFound()
		}
		return nil
	}
	// The record decides, not the local revocation: a DELETE retried after
	// a failed record (revoked here, not yet in the record) records it now.
	err := s.opts.SessionEnds.EndSession(context.Background(), sid, exp)
	s.revokeSession(sid, exp)
	switch {
	case errors.Is(err, ErrSessionEnded):
		return sessionNotFound()
	case err != nil:
		return s.sessionStoreFailed("end", err)
	}
	return nil
}

// revokeSession drops session sid's state here, ends its streams and
// remembers the id as ended until exp; false when it already was.
func (s *Server) revokeSession(sid string, exp time.Time) bool {
	sess, fresh, forgot := s.sessions.Revoke(sid, exp)
	if forgot > 0 {
		s.log.Warn("mcp: too many ended sessions to remember; the soonest-expiring ids were forgotten", "forgot", forgot, "limit", session.MaxRevoked)
	}
	if sess != nil {
		sess.Close()
	}
	return fresh
}

// runGetStream serves the standalone GET stream until the client leaves, the
// session ends, the server closes or the credential that opened it is no
// longer accepted (then it just ends: the GET stream carries no responses).
func (s *Server) runGetStream(sess *session.State, out *sse.Writer, audience string, cred credential) error {
	events, unsubscribe := s.hub.Subscribe(audience)
	defer unsubscribe()
	defer s.active.Track(false)()
	tick := time.NewTicker(s.opts.KeepAlive)
	defer tick.Stop()
	watch := s.watchCredential(cred)
	defer watch.Stop()
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
		case <-watch.C():
			if e := watch.Fired(); e != nil {
				return s.streamCredentialEnded(sess.Principal, e)
			}
		case m := <-sess.Outbox():
			if e := watch.Ended(); e != nil {
				return s.streamCredentialEnded(sess.Principal, e)
			}
			err = out.Event(m)
		case ev := <-events:
			if e := watch.Ended(); e != nil {
				return s.streamCredentialEnded(sess.Principal, e)
			}
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

// streamCredentialEnded notes that a GET stream ended with its credential.
func (s *Server) streamCredentialEnded(principal string, e *Error) error {
	s.log.Debug("mcp: a GET stream ended with its credential", "principal", principal, "reason", e.Data)
	return nil
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
