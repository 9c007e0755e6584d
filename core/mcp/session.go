package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
)

// A 2025-11-25 session is minted by initialize; package session holds its
// state and its lifecycle (session.Lifecycle: minting, verifying,
// rebuilding on another node, ending, and the shared record of live
// sessions, Options.LiveSessions).

// initialize answers the initialize request and mints a session.
func (s *Server) initialize(r *Request, w ResponseWriter, msg *jsonrpc.Message) {
	ver, caps, e := s.sessions.Initialize(msg.Params)
	var sid string
	if e == nil {
		sid, e = s.sessions.Begin(r.Principal, ver, caps)
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

// runGetStream serves the standalone GET stream of sess
// (session.State.ServeGetStream) with the hub's events for audience, until
// the credential that opened it is no longer accepted at the latest.
func (s *Server) runGetStream(sess *session.State, out *sse.Writer, audience string, cred credential) error {
	events, unsubscribe := s.hub.Subscribe(audience)
	defer unsubscribe()
	defer s.active.Track(false)()
	watch := s.watchCredential(cred)
	defer watch.Stop()
	return sess.ServeGetStream(out, session.GetStream{Events: events, Closing: s.baseCtx.Done(),
		KeepAlive: s.opts.KeepAlive, Watch: watch, Prompts: len(s.prompts) > 0, Log: s.log})
}
