package mcp

import (
	"encoding/json"
	"net/http"
	"strings"
)

func (s *Server) serverInfo() obj {
	info := obj{"name": s.opts.Name, "version": s.opts.Version}
	if s.opts.Title != "" {
		info["title"] = s.opts.Title
	}
	return info
}

// capabilities returns the server capabilities for an era and a client's
// capabilities (proposals are offered only to clients that declared them).
func (s *Server) capabilities(modern bool, client json.RawMessage) obj {
	c := obj{
		"resources":   obj{"subscribe": true, "listChanged": true},
		"tools":       obj{"listChanged": true},
		"completions": obj{},
		"logging":     obj{},
	}
	if s.fixtures != nil {
		c["prompts"] = obj{"listChanged": true}
	}
	if modern && s.tasks != nil {
		c["extensions"] = obj{ExtTasks: obj{}}
	}
	addStreamCapability(c, client)
	return c
}

func (s *Server) registerMethods() {
	both := func(m *method) *method { m.legacy, m.modern = true, true; return m }
	legacy := func(m *method) *method { m.legacy = true; return m }
	modern := func(m *method) *method { m.modern = true; return m }
	s.methods = map[string]*method{
		"ping": legacy(&method{run: func(c *call) (any, error) { return obj{}, nil }}),
		"logging/setLevel": legacy(&method{run: func(c *call) (any, error) {
			var level string
			if e := c.param("level", &level); e != nil {
				return nil, e
			}
			n, ok := logLevels[level]
			if !ok {
				return nil, invalidParams("Invalid params: unknown log level %q", level)
			}
			c.sess.mu.Lock()
			c.sess.logLevel = n
			c.sess.mu.Unlock()
			return obj{}, nil
		}}),
		"server/discover": modern(&method{run: s.discover}),
		"subscriptions/listen": modern(&method{
			stream: func(*call) bool { return true },
			run:    s.listen,
		}),
		"resources/list":           both(&method{cache: true, run: s.resourcesList}),
		"resources/templates/list": both(&method{cache: true, run: s.resourcesTemplates}),
		"resources/read": both(&method{cache: true, run: s.resourcesRead,
			stream: func(c *call) bool { return false }}),
		"resources/stream":      both(&method{raw: true, run: s.resourcesStream}),
		"resources/subscribe":   legacy(&method{run: s.subscribe(true)}),
		"resources/unsubscribe": legacy(&method{run: s.subscribe(false)}),
		"tools/list":            both(&method{cache: true, run: s.toolsList}),
		"tools/call": both(&method{
			precheck: s.toolsPrecheck,
			stream:   s.toolsStream,
			run:      s.toolsCall,
		}),
		"completion/complete": both(&method{run: s.complete}),
	}
	if s.opts.ConformanceFixtures {
		s.methods["prompts/list"] = both(&method{cache: true, run: s.promptsList})
		s.methods["prompts/get"] = both(&method{run: s.promptsGet})
	}
}

func (s *Server) discover(c *call) (any, error) {
	res := obj{
		"supportedVersions": supportedModern,
		"capabilities":      s.capabilities(true, c.caps),
	}
	if s.opts.Instructions != "" {
		res["instructions"] = s.opts.Instructions
	}
	s.addCacheHints(c, res)
	return res, nil
}

func (s *Server) subscribe(on bool) func(c *call) (any, error) {
	return func(c *call) (any, error) {
		var uri string
		if e := c.param("uri", &uri); e != nil {
			return nil, e
		}
		if uri == "" {
			return nil, invalidParams("Invalid params: uri is required")
		}
		c.sess.mu.Lock()
		if on {
			c.sess.subs[uri] = true
		} else {
			delete(c.sess.subs, uri)
		}
		c.sess.mu.Unlock()
		return obj{}, nil
	}
}

// listen serves subscriptions/listen (2026-07-28): acknowledge, then
// forward the opted-in change notifications until the client leaves or the
// server closes, then end with a result.
func (s *Server) listen(c *call) (any, error) {
	var p struct {
		ToolsListChanged      bool     `json:"toolsListChanged"`
		PromptsListChanged    bool     `json:"promptsListChanged"`
		ResourcesListChanged  bool     `json:"resourcesListChanged"`
		ResourceSubscriptions []string `json:"resourceSubscriptions"`
	}
	if e := c.param("notifications", &p); e != nil {
		return nil, e
	}
	honoured := obj{}
	if p.ToolsListChanged {
		honoured["toolsListChanged"] = true
	}
	if p.PromptsListChanged && s.fixtures != nil {
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
	subMeta := obj{metaSubscriptionID: c.id}
	events, unsubscribe := s.hub.Subscribe()
	defer unsubscribe()
	c.notify("notifications/subscriptions/acknowledged", obj{"_meta": subMeta, "notifications": honoured})
	if c.out == nil {
		return nil, newError(CodeInvalidRequest, "subscriptions/listen needs an SSE response (Accept: text/event-stream)", nil)
	}
	if err := c.out.failed(); err != nil {
		return nil, err
	}
	for {
		select {
		case <-c.ctx.Done():
			if s.baseCtx.Err() != nil {
				return obj{"_meta": subMeta}, nil
			}
			return nil, c.ctx.Err()
		case ev := <-events:
			var m string
			var params obj
			switch {
			case ev.Kind == ToolListChanged && p.ToolsListChanged:
				m = "notifications/tools/list_changed"
			case ev.Kind == PromptListChanged && p.PromptsListChanged:
				m = "notifications/prompts/list_changed"
			case ev.Kind == ResourceListChanged && p.ResourcesListChanged:
				m = "notifications/resources/list_changed"
			case ev.Kind == ResourceUpdated && subs[ev.URI]:
				m, params = "notifications/resources/updated", obj{"uri": ev.URI}
			default:
				continue
			}
			if params == nil {
				params = obj{}
			}
			params["_meta"] = subMeta
			c.notify(m, params)
			if err := c.out.failed(); err != nil {
				return nil, err
			}
		}
	}
}

func (s *Server) complete(c *call) (any, error) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	raw, _ := json.Marshal(c.params)
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("Invalid params: %v", err)
	}
	var values []string
	switch p.Ref.Type {
	case "ref/resource":
		if p.Ref.URI == BlobURITemplate && p.Argument.Name == "key" {
			page, err := s.backend.List(c.ctx, p.Argument.Value, "", 100)
			if err == nil {
				for _, it := range page.Items {
					values = append(values, it.Key)
				}
			}
		} else if s.fixtures != nil {
			values = s.fixtures.complete(p.Ref.Type, p.Ref.URI, p.Argument.Name, p.Argument.Value)
		}
	case "ref/prompt":
		if s.fixtures != nil {
			values = s.fixtures.complete(p.Ref.Type, p.Ref.Name, p.Argument.Name, p.Argument.Value)
		}
	default:
		return nil, invalidParams("Invalid params: unknown ref type %q", p.Ref.Type)
	}
	if values == nil {
		values = []string{}
	}
	if len(values) > 100 {
		values = values[:100]
	}
	return obj{"completion": obj{"values": values, "total": len(values), "hasMore": false}}, nil
}

func filterPrefix(all []string, prefix string) []string {
	out := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// missingCapability is the 2026-07-28 -32021 error.
func missingCapability(names ...string) *Error {
	req := obj{}
	for _, n := range names {
		req[n] = obj{}
	}
	return newError(CodeMissingCapability, "Missing required client capability: "+strings.Join(names, ", "),
		obj{"requiredCapabilities": req}).withStatus(http.StatusBadRequest)
}
