package mcp

import (
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/session"
)

// listen serves subscriptions/listen (2026-07-28): acknowledge, then
// forward the opted-in change notifications until the client leaves or the
// server closes, then end with a result.
func (s *Server) listen(c *Call) (any, error) {
	var p listenNotifications
	if e := c.param("notifications", &p); e != nil {
		return nil, e
	}
	if len(p.ResourceSubscriptions) > session.MaxSubscriptions {
		return nil, jsonrpc.InvalidParams("Invalid params: notifications.resourceSubscriptions lists more than %d URIs", session.MaxSubscriptions)
	}
	for _, u := range p.ResourceSubscriptions {
		if len(u) > MaxURIBytes {
			return nil, jsonrpc.InvalidParams("Invalid params: a URI in notifications.resourceSubscriptions is longer than %d bytes", MaxURIBytes)
		}
	}
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
	subs := map[string]bool{}
	if len(p.ResourceSubscriptions) > 0 {
		honoured["resourceSubscriptions"] = p.ResourceSubscriptions
		for _, u := range p.ResourceSubscriptions {
			subs[u] = true
		}
	}
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

// listenNotifications are the notifications a subscriptions/listen opts in
// to (params.notifications).
type listenNotifications struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	PromptsListChanged    bool     `json:"promptsListChanged"`
	ResourcesListChanged  bool     `json:"resourcesListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
}

// notification is the notification method and params (without _meta) ev
// makes for a listener opted in to p and subscribed to subs; "" for none.
func (p *listenNotifications) notification(ev Event, subs map[string]bool) (string, Object) {
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
