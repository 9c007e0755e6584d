package mcp

import (
	"encoding/json"
	"net/http"
	"time"

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
