package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
	"github.com/mcpblob/mcpblob/core/token"
)

// A 2025-11-25 session's state (package session) is node-local. The
// session id is a signed token (purpose token.PurposeSession, bound to the
// principal, carrying the negotiated version), so any node can validate it
// and rebuild the state lazily (the client capabilities the server reads,
// when they fit in maxCapsInSession bytes, travel in the id); what a
// rebuilt session loses is node-local: the log level, resource
// subscriptions, the GET stream and pending server-to-client requests
// (load balancers hash on Mcp-Session-Id to keep those on one node).
//
// A node holds at most Limits.SessionsPerPrincipal states of one principal
// and Limits.Sessions in all, minted or rebuilt (session.Table): at the
// bound it ends the least recently used idle session of the principal (or
// of the node) as a DELETE would, or refuses the new one (limits.Refusal).
//
// With Options.LiveSessions, initialize records each session as live where
// every node sees it, each request of a session asks that record, and a
// DELETE or an eviction removes it: another node refuses the id at its very
// next request. Ending a session then costs the store nothing, and the
// records it holds are those of sessions neither ended nor expired. The
// local revocations are a cache of ended ids only.

// maxCapsInSession bounds the client capabilities copied into a session id.
const maxCapsInSession = 512

// initialize answers the initialize request and mints a session.
func (s *Server) initialize(r *Request, w ResponseWriter, msg *jsonrpc.Message) {
	ver, caps, e := s.initializeParams(msg)
	var sid string
	if e == nil {
		sid, e = s.beginSession(r.Principal, ver, caps)
	}
	if e != nil {
		writeError(w, msg.ID, e)
		return
	}
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

// initializeParams reads initialize's protocol version (an unknown one is
// answered with the newest of the era) and what the session keeps of the
// client's capabilities.
func (s *Server) initializeParams(msg *jsonrpc.Message) (string, json.RawMessage, *Error) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return "", nil, jsonrpc.InvalidParams("Invalid params: %v", err)
		}
	}
	ver := p.ProtocolVersion
	if !legacyVersions[ver] {
		ver = Version20251125
	}
	caps, e := s.keptCapabilities(p.Capabilities)
	return ver, caps, e
}

// beginSession mints a session of principal, holds its state here and,
// with Options.LiveSessions, records it as live (a write charged to the
// principal's claims a minute); it returns the session id.
func (s *Server) beginSession(principal, ver string, caps json.RawMessage) (string, *Error) {
	live := s.opts.LiveSessions
	if live != nil {
		if err := s.budgets.Claims.Allow(principal); err != nil {
			return "", limits.Refusal(err, "session records written")
		}
	}
	exp := time.Now().Add(s.opts.SessionTTL).Truncate(time.Second) // as the signed id carries it
	claims := token.Claims{Purpose: token.PurposeSession, Principal: principal, Object: ver, Expires: exp}
	if len(caps) <= maxCapsInSession {
		// Small capability objects ride in the signed id, so a node that
		// rebuilds the session still knows them.
		claims.Data = caps
	}
	sid, err := s.keyring.Sign(claims)
	if err != nil {
		return "", s.toError(&Call{method: "initialize"}, err)
	}
	sess := session.New(sid, ver, caps, exp)
	sess.Principal = principal
	evicted, err := s.sessions.Add(sess)
	s.endEvicted(evicted)
	if err != nil {
		return "", sessionsLimit(err)
	}
	if live != nil {
		if err := live.Begin(context.Background(), sid, exp); err != nil {
			s.sessions.Forget(sid) // never given out
			return "", s.sessionStoreFailed("begin", err)
		}
	}
	return sid, nil
}

// sessionsLimit is the answer to a session the table had no room for.
func sessionsLimit(err error) *Error {
	if e := limits.Refusal(err, "sessions held"); e != nil {
		return e
	}
	panic("bug: session.Table refused a session for another reason than its pool: " + err.Error())
}

// LiveSessions records the live 2025-11-25 sessions where every node
// sharing it sees them ([Options.LiveSessions]): one record per session,
// from initialize until a DELETE or an eviction ends it, or it expires. A
// session id is a credential: an implementation must name a record by a
// digest of the id, never the id itself, and must not log it. expires is
// the session's expiry, in whole seconds and the same on every node; a
// record need not outlive it. Implementations must be safe for concurrent
// use.
type LiveSessions interface {
	// Begin records session id as live; initialize calls it once per id.
	Begin(ctx context.Context, id string, expires time.Time) error
	// Live reports whether session id's record exists, asking the shared
	// record every time: no cache of "live".
	Live(ctx context.Context, id string, expires time.Time) (bool, error)
	// End removes session id's record; a missing record is not an error.
	End(ctx context.Context, id string, expires time.Time) error
}

// sessionNotFound answers an unknown, expired, foreign or ended session
// (SPEC.md §2.1: the client then initializes a new one).
func sessionNotFound() *Error {
	return jsonrpc.NewError(CodeSessionNotFound, "Session not found", nil).WithStatus(http.StatusNotFound)
}

// sessionStoreFailed answers a request whose session could not be
// recorded, checked or ended in Options.LiveSessions: neither a 404 nor a
// success.
func (s *Server) sessionStoreFailed(op string, err error) *Error {
	s.log.Error("mcp: the shared record of live sessions failed", "op", op, "err", err)
	return jsonrpc.NewError(CodeInternalError, "Service unavailable: the session cannot be checked right now; try again", nil).
		WithStatus(http.StatusServiceUnavailable)
}

// lookupSession validates sid for principal and returns its state, or the
// error to answer: 404 for a session that is not (or no longer) valid, 503
// when Options.LiveSessions could not be asked, 429/503 when the node
// cannot hold one more rebuilt session. The session table's lock is not
// held while LiveSessions is asked, and the question outlives Close (a
// request served during a graceful shutdown still gets its answer).
func (s *Server) lookupSession(sid, principal string) (*session.State, *Error) {
	if sess := s.sessions.Known(sid, principal); sess != nil { // a verified id: no HMAC again
		if e := s.checkLive(sid, sess.Expires); e != nil {
			return nil, e
		}
		return sess, nil
	}
	c, e := s.verifySession(sid, principal)
	if e != nil {
		return nil, e
	}
	if s.sessions.Ended(sid) { // known here: the record is not asked again
		return nil, sessionNotFound()
	}
	if e := s.checkLive(sid, c.Expires); e != nil {
		return nil, e
	}
	sess, evicted, err := s.sessions.Get(sid, func() *session.State { return rebuiltSession(sid, c) })
	s.endEvicted(evicted)
	switch {
	case err != nil:
		return nil, sessionsLimit(err)
	case sess == nil: // ended here meanwhile
		return nil, sessionNotFound()
	}
	return sess, nil
}

// checkLive asks Options.LiveSessions, when set, whether session sid is
// live; one that is not is ended here too (its state dropped, its streams
// closed) and answered 404.
func (s *Server) checkLive(sid string, exp time.Time) *Error {
	if s.opts.LiveSessions == nil {
		return nil
	}
	live, err := s.opts.LiveSessions.Live(context.Background(), sid, exp)
	switch {
	case err != nil:
		return s.sessionStoreFailed("check", err)
	case !live: // ended on another node, or minted without a record
		s.revokeSession(sid, exp)
		return sessionNotFound()
	}
	return nil
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

// rebuiltSession is the state of the verified session sid, rebuilt from
// the id's claims c on a node that holds none.
func rebuiltSession(sid string, c token.Claims) *session.State {
	var caps json.RawMessage
	if len(c.Data) > 0 && json.Valid(c.Data) {
		caps = c.Data
	}
	sess := session.New(sid, c.Object, caps, c.Expires)
	sess.Principal = c.Principal
	return sess
}

// endSession ends session sid (DELETE): it removes the session's record
// from Options.LiveSessions, when set, so every node refuses the id, and
// revokes it here whatever the record said. nil means this call found the
// session live and ended it; 404 when it had already ended (here, or
// elsewhere by the record); 503 when the record failed. Two DELETEs that
// race may both find the record and both answer 200: removing a record
// cannot tell whether it was there (S3 deletes missing keys silently).
func (s *Server) endSession(sid string, exp time.Time) *Error {
	live := s.opts.LiveSessions
	if live == nil {
		if !s.revokeSession(sid, exp) {
			return sessionNotFound()
		}
		return nil
	}
	// The record decides, not the local revocation: a DELETE retried after
	// a failed removal (revoked here, still recorded) removes it now.
	ctx := context.Background()
	found, err := live.Live(ctx, sid, exp)
	if err == nil && found {
		err = live.End(ctx, sid, exp)
	}
	s.revokeSession(sid, exp)
	switch {
	case err != nil:
		return s.sessionStoreFailed("end", err)
	case !found:
		return sessionNotFound()
	}
	return nil
}

// endEvicted ends the sessions the table evicted to make room, as a
// DELETE would: they are revoked here already; their streams close and
// their records go.
func (s *Server) endEvicted(evicted []*session.State) {
	for _, sess := range evicted {
		sess.Close()
		s.log.Debug("mcp: ended the least recently used idle session to make room", "principal", sess.Principal)
		if s.opts.LiveSessions == nil {
			continue
		}
		if err := s.opts.LiveSessions.End(context.Background(), sess.ID, sess.Expires); err != nil {
			s.log.Error("mcp: the shared record of live sessions failed", "op", "evict", "err", err)
		}
	}
}

// revokeSession drops session sid's state here, ends its streams and
// remembers the id as ended until exp; false when it already was.
func (s *Server) revokeSession(sid string, exp time.Time) bool {
	sess, fresh := s.sessions.Revoke(sid, exp)
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
