package mcp

import (
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/session"
)

// listenRequest is what a subscriptions/listen request asked for, read and
// charged to its principal by listenPrecheck before any stream starts.
type listenRequest struct {
	listenFlags
	uris []string        // as listed, for the acknowledgement only
	subs map[string]bool // the set of URIs, all the stream keeps
	held holdings        // one stream; len(subs) subscriptions and their bytes
}

type listenFlags struct {
	ToolsListChanged     bool `json:"toolsListChanged"`
	PromptsListChanged   bool `json:"promptsListChanged"`
	ResourcesListChanged bool `json:"resourcesListChanged"`
}

// listenPrecheck reads subscriptions/listen's params and takes one open
// stream, the subscriptions and their URI bytes from the principal's
// budgets, or refuses the request before its stream starts.
func (s *Server) listenPrecheck(c *Call) *Error {
	var p struct {
		listenFlags
		ResourceSubscriptions []string `json:"resourceSubscriptions"`
	}
	if e := c.param("notifications", &p); e != nil {
		return e
	}
	if len(p.ResourceSubscriptions) > session.MaxSubscriptions {
		return jsonrpc.InvalidParams("Invalid params: notifications.resourceSubscriptions lists more than %d URIs", session.MaxSubscriptions)
	}
	subs, bytes := make(map[string]bool, len(p.ResourceSubscriptions)), int64(0)
	for _, u := range p.ResourceSubscriptions {
		if len(u) > MaxURIBytes {
			return jsonrpc.InvalidParams("Invalid params: a URI in notifications.resourceSubscriptions is longer than %d bytes", MaxURIBytes)
		}
		if !subs[u] {
			subs[u], bytes = true, bytes+int64(len(u))
		}
	}
	stream, e := s.budgets.OpenStream(c.principal)
	if e != nil {
		return e
	}
	charged, err := s.subscriptionBudget().Take(c.principal, int64(len(subs)), bytes)
	if err != nil {
		stream.Release()
		return limits.Refusal(err, subscriptionsWhat)
	}
	c.listen = &listenRequest{listenFlags: p.listenFlags, uris: p.ResourceSubscriptions, subs: subs,
		held: holdings{stream, charged}}
	return nil
}

// listen serves subscriptions/listen (2026-07-28): acknowledge, then
// forward the opted-in change notifications until the client leaves or the
// server closes, then end with a result. While it runs, the stream keeps
// the set of URIs and what listenPrecheck charged for it, not the request.
func (s *Server) listen(c *Call) (any, error) {
	p, subs, held := c.listen.listenFlags, c.listen.subs, c.listen.held
	defer held.Release()
	honoured := s.honoured(&p, c.listen.uris)
	c.listen = nil
	c.forgetRequest()
	subMeta := Object{metaSubscriptionID: c.id}
	events, unsubscribe := s.hub.Subscribe(c.audience)
	defer unsubscribe()
	c.Notify("notifications/subscriptions/acknowledged", Object{"_meta": subMeta, "notifications": honoured})
	if c.out == nil {
		return nil, jsonrpc.NewError(CodeInvalidRequest, "subscriptions/listen needs an SSE response (Accept: text/event-stream)", nil)
	}
	if err := c.out.Failed(); err != nil {
		return nil, err
	}
	watch := s.watchCredential(c.cred) // the stream ends with its credential (credential.go)
	defer watch.Stop()
	for {
		select {
		case <-c.ctx.Done():
			if s.baseCtx.Err() != nil {
				return Object{"_meta": subMeta}, nil
			}
			return nil, c.ctx.Err()
		case <-watch.C():
			if e := watch.Fired(); e != nil {
				return nil, e
			}
		case ev := <-events:
			if e := watch.Ended(); e != nil {
				return nil, e
			}
			m, params := p.notification(ev, subs)
			if m == "" {
				continue
			}
			params["_meta"] = subMeta
			c.Notify(m, params)
			if err := c.out.Failed(); err != nil {
				return nil, err
			}
		}
	}
}

// notification is the notification method and params (without _meta) ev
// makes for a listener opted in to p and subscribed to subs; "" for none.
func (p *listenFlags) notification(ev Event, subs map[string]bool) (string, Object) {
	switch {
	case ev.Kind == ToolListChanged && p.ToolsListChanged:
		return "notifications/tools/list_changed", Object{}
	case ev.Kind == PromptListChanged && p.PromptsListChanged:
		return "notifications/prompts/list_changed", Object{}
	case ev.Kind == ResourceListChanged && p.ResourcesListChanged:
		return "notifications/resources/list_changed", Object{}
	case ev.Kind == ResourceUpdated && subs[ev.URI]:
		return "notifications/resources/updated", Object{"uri": ev.URI}
	}
	return "", nil
}

// honoured is the acknowledgement's "notifications": what the server will
// send of what p asked for (prompts only when it has some).
func (s *Server) honoured(p *listenFlags, uris []string) Object {
	honoured := Object{}
	if p.ToolsListChanged {
		honoured["toolsListChanged"] = true
	}
	if p.PromptsListChanged && len(s.prompts) > 0 {
		honoured["promptsListChanged"] = true
	} else {
		p.PromptsListChanged = false
	}
	if p.ResourcesListChanged {
		honoured["resourcesListChanged"] = true
	}
	if len(uris) > 0 {
		honoured["resourceSubscriptions"] = uris
	}
	return honoured
}
