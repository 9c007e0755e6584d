package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/clientcaps"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/token"
)

// A 2025-11-25 session's state is node-local. The session id is a signed
// token (purpose token.PurposeSession, bound to the principal, carrying
// the negotiated version), so any node can validate it and rebuild the
// state lazily (the client capabilities the server reads, when they fit in
// maxCapsInID bytes, travel in the id); what a rebuilt session loses is
// node-local: the log level, resource subscriptions, the GET stream and
// pending server-to-client requests (load balancers hash on Mcp-Session-Id
// to keep those on one node).
//
// A node holds at most Limits.SessionsPerPrincipal states of one principal
// and Limits.Sessions in all, minted or rebuilt ([Table]): at the bound it
// ends the least recently used idle session of the principal (or of the
// node) as a DELETE would, or refuses the new one (limits.Refusal).
//
// With a [LiveSessions], Begin records each session as live where every
// node sees it, each request of a session asks that record, and a DELETE
// or an eviction removes it: another node refuses the id at its very next
// request. Ending a session then costs the store nothing, and the records
// it holds are those of sessions neither ended nor expired. The local
// revocations are a cache of ended ids only.

// maxCapsInID bounds the client capabilities copied into a session id.
const maxCapsInID = 512

// LiveSessions records the live 2025-11-25 sessions where every node
// sharing it sees them (mcp.Options.LiveSessions): one record per session,
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

// Lifecycle mints, verifies, rebuilds and ends the sessions of one node:
// its [Table] of states, the ids signed with Keyring, and, when Live is
// set, their shared records. Its errors are the protocol's answers.
type Lifecycle struct {
	*Table
	Keyring *token.Keyring
	// TTL is how long a session id stays valid.
	TTL time.Duration
	// Live, when set, is the shared record of live sessions; nil: an
	// ended session is refused by this node only.
	Live LiveSessions
	// Claims is charged one claim for each record Live is asked to begin.
	Claims *budget.Rate
	// Versions are the protocol versions a session id may carry, Newest
	// the one an initialize asking for another gets.
	Versions map[string]bool
	Newest   string
	// CapabilityBytes bounds the client capabilities a session keeps
	// (limits.Limits.CapabilityBytes); 0: no bound.
	CapabilityBytes int64
	// Log receives diagnostics (never an id).
	Log *slog.Logger
}

// Begin mints a session of principal with protocol version ver and the
// client capabilities caps it keeps, holds its state here and, with Live,
// records it as live (a write charged to the principal's claims a
// minute); it returns the session id.
func (l *Lifecycle) Begin(principal, ver string, caps json.RawMessage) (string, *jsonrpc.Error) {
	if l.Live != nil {
		if err := l.Claims.Allow(principal); err != nil {
			return "", limits.Refusal(err, "session records written")
		}
	}
	exp := time.Now().Add(l.TTL).Truncate(time.Second) // as the signed id carries it
	claims := token.Claims{Purpose: token.PurposeSession, Principal: principal, Object: ver, Expires: exp}
	if len(caps) <= maxCapsInID {
		// Small capability objects ride in the signed id, so a node that
		// rebuilds the session still knows them.
		claims.Data = caps
	}
	sid, err := l.Keyring.Sign(claims)
	if err != nil {
		l.Log.Error("mcp: request failed", "method", "initialize", "err", err)
		return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error", nil)
	}
	sess := New(sid, ver, caps, exp)
	sess.Principal = principal
	evicted, err := l.Add(sess)
	l.endEvicted(evicted)
	if err != nil {
		return "", tableFull(err)
	}
	if l.Live != nil {
		if err := l.Live.Begin(context.Background(), sid, exp); err != nil {
			l.Forget(sid) // never given out
			return "", l.storeFailed("begin", err)
		}
	}
	return sid, nil
}

// tableFull is the answer to a session the table had no room for.
func tableFull(err error) *jsonrpc.Error {
	if e := limits.Refusal(err, "sessions held"); e != nil {
		return e
	}
	panic("bug: session.Table refused a session for another reason than its pool: " + err.Error())
}

// NotFound answers an unknown, expired, foreign or ended session
// (the 2025-11-25 transport: the client then initializes a new one).
func NotFound() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeSessionNotFound, "Session not found", nil).WithStatus(http.StatusNotFound)
}

// storeFailed answers a request whose session could not be recorded,
// checked or ended in Live: neither a 404 nor a success.
func (l *Lifecycle) storeFailed(op string, err error) *jsonrpc.Error {
	l.Log.Error("mcp: the shared record of live sessions failed", "op", op, "err", err)
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "Service unavailable: the session cannot be checked right now; try again", nil).
		WithStatus(http.StatusServiceUnavailable)
}

// Find validates sid for principal and returns its state, or the error to
// answer: 404 for a session that is not (or no longer) valid, 503 when
// Live could not be asked, 429/503 when the node cannot hold one more
// rebuilt session. The table's lock is not held while Live is asked, and
// the question outlives the server's Close (a request served during a
// graceful shutdown still gets its answer).
func (l *Lifecycle) Find(sid, principal string) (*State, *jsonrpc.Error) {
	if sess := l.Known(sid, principal); sess != nil { // a verified id: no HMAC again
		if e := l.checkLive(sid, sess.Expires); e != nil {
			return nil, e
		}
		return sess, nil
	}
	c, e := l.Verify(sid, principal)
	if e != nil {
		return nil, e
	}
	if l.Ended(sid) { // known here: the record is not asked again
		return nil, NotFound()
	}
	if e := l.checkLive(sid, c.Expires); e != nil {
		return nil, e
	}
	sess, evicted, err := l.Get(sid, func() *State { return rebuilt(sid, c) })
	l.endEvicted(evicted)
	switch {
	case err != nil:
		return nil, tableFull(err)
	case sess == nil: // ended here meanwhile
		return nil, NotFound()
	}
	return sess, nil
}

// checkLive asks Live, when set, whether session sid is live; one that is
// not is ended here too (its state dropped, its streams closed) and
// answered 404.
func (l *Lifecycle) checkLive(sid string, exp time.Time) *jsonrpc.Error {
	if l.Live == nil {
		return nil
	}
	live, err := l.Live.Live(context.Background(), sid, exp)
	switch {
	case err != nil:
		return l.storeFailed("check", err)
	case !live: // ended on another node, or minted without a record
		l.revoke(sid, exp)
		return NotFound()
	}
	return nil
}

// Verify checks sid's signature, expiry, principal and version.
func (l *Lifecycle) Verify(sid, principal string) (token.Claims, *jsonrpc.Error) {
	// The principal is inside the signed id: compare it on every request.
	c, err := l.Keyring.Verify(sid, token.PurposeSession)
	if err != nil || c.Principal != principal || !l.Versions[c.Object] {
		return c, NotFound()
	}
	return c, nil
}

// rebuilt is the state of the verified session sid, rebuilt from the id's
// claims c on a node that holds none.
func rebuilt(sid string, c token.Claims) *State {
	var caps json.RawMessage
	if len(c.Data) > 0 && json.Valid(c.Data) {
		caps = c.Data
	}
	sess := New(sid, c.Object, caps, c.Expires)
	sess.Principal = c.Principal
	return sess
}

// End ends session sid (DELETE): it removes the session's record from
// Live, when set, so every node refuses the id, and revokes it here
// whatever the record said. nil means this call found the session live
// and ended it; 404 when it had already ended (here, or elsewhere by the
// record); 503 when the record failed. Two DELETEs that race may both find
// the record and both answer 200: removing a record cannot tell whether it
// was there (S3 deletes missing keys silently).
func (l *Lifecycle) End(sid string, exp time.Time) *jsonrpc.Error {
	if l.Live == nil {
		if !l.revoke(sid, exp) {
			return NotFound()
		}
		return nil
	}
	// The record decides, not the local revocation: a DELETE retried after
	// a failed removal (revoked here, still recorded) removes it now.
	ctx := context.Background()
	found, err := l.Live.Live(ctx, sid, exp)
	if err == nil && found {
		err = l.Live.End(ctx, sid, exp)
	}
	l.revoke(sid, exp)
	switch {
	case err != nil:
		return l.storeFailed("end", err)
	case !found:
		return NotFound()
	}
	return nil
}

// endEvicted ends the sessions the table evicted to make room, as a DELETE
// would: they are revoked here already; their streams close and their
// records go.
func (l *Lifecycle) endEvicted(evicted []*State) {
	for _, sess := range evicted {
		sess.Close()
		l.Log.Debug("mcp: ended the least recently used idle session to make room", "principal", sess.Principal)
		if l.Live == nil {
			continue
		}
		if err := l.Live.End(context.Background(), sess.ID, sess.Expires); err != nil {
			l.Log.Error("mcp: the shared record of live sessions failed", "op", "evict", "err", err)
		}
	}
}

// revoke drops session sid's state here, ends its streams and remembers
// the id as ended until exp; false when it already was.
func (l *Lifecycle) revoke(sid string, exp time.Time) bool {
	sess, fresh := l.Revoke(sid, exp)
	if sess != nil {
		sess.Close()
	}
	return fresh
}

// Initialize reads an initialize request's params: its protocol version
// (one not in Versions is answered with Newest) and what the session keeps
// of the client's capabilities (keptCapabilities).
func (l *Lifecycle) Initialize(params json.RawMessage) (string, json.RawMessage, *jsonrpc.Error) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return "", nil, jsonrpc.InvalidParams("Invalid params: %v", err)
		}
	}
	ver := p.ProtocolVersion
	if !l.Versions[ver] {
		ver = l.Newest
	}
	caps, e := l.keptCapabilities(p.Capabilities)
	return ver, caps, e
}

// keptCapabilities is what a 2025-11-25 session keeps of the client's
// capabilities object raw for its life (nil when raw is not an object):
// the members the server reads (package clientcaps), or -32602 naming
// capabilities and the limit when even those take more than
// CapabilityBytes. A 2026-07-28 request carries its capabilities and the
// server keeps none.
func (l *Lifecycle) keptCapabilities(raw json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	kept := clientcaps.Prune(raw)
	if limit := l.CapabilityBytes; limit > 0 && int64(len(kept)) > limit {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"Invalid params: capabilities: the members this server reads take "+strconv.Itoa(len(kept))+
				" bytes; at most "+strconv.FormatInt(limit, 10)+" are kept",
			map[string]any{"param": "capabilities", "limit": "capability_bytes", "max": limit})
	}
	return kept, nil
}
