package mcp

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/mcp/session"
)

func (s *Server) serverInfo() Object {
	info := Object{"name": s.impl.Name, "version": s.impl.Version}
	if s.impl.Title != "" {
		info["title"] = s.impl.Title
	}
	return info
}

// capabilities returns the server capabilities for an era and a client's
// capabilities (proposals are offered only to clients that declared them).
func (s *Server) capabilities(modern bool, client json.RawMessage) Object {
	c := Object{
		"resources":   Object{"subscribe": true, "listChanged": true},
		"tools":       Object{"listChanged": true},
		"completions": Object{},
		"logging":     Object{},
	}
	if len(s.prompts) > 0 {
		c["prompts"] = Object{"listChanged": true}
	}
	if modern && s.tasks != nil {
		c["extensions"] = Object{ExtTasks: Object{}}
	}
	resstream.AddCapability(c, client)
	return c
}

func (s *Server) registerMethods() {
	both := func(m *method) *method { m.legacy, m.modern = true, true; return m }
	legacy := func(m *method) *method { m.legacy = true; return m }
	modern := func(m *method) *method { m.modern = true; return m }
	s.methods = map[string]*method{
		"ping":             legacy(&method{run: func(c *Call) (any, error) { return Object{}, nil }}),
		"logging/setLevel": legacy(&method{run: s.setLevel}),
		"server/discover":  modern(&method{run: s.discover}),
		"subscriptions/listen": modern(&method{
			precheck: s.listenPrecheck,
			stream:   func(*Call) bool { return true },
			run:      s.listen,
		}),
		"resources/list":           both(&method{cache: true, run: s.resourcesList}),
		"resources/templates/list": both(&method{cache: true, run: s.resourcesTemplates}),
		"resources/read": both(&method{cache: true, run: s.resourcesRead,
			stream: func(c *Call) bool { return false }}),
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
		"prompts/list":        both(&method{cache: true, run: s.promptsList}),
		"prompts/get":         both(&method{run: s.promptsGet}),
	}
}

// offered reports whether a method is served: prompts only once a prompt
// is registered.
func (s *Server) offered(name string) *method {
	if strings.HasPrefix(name, "prompts/") && len(s.prompts) == 0 {
		return nil
	}
	return s.methods[name]
}

func (s *Server) setLevel(c *Call) (any, error) {
	var level string
	if e := c.param("level", &level); e != nil {
		return nil, e
	}
	n, ok := logLevels[level]
	if !ok {
		return nil, jsonrpc.InvalidParams("Invalid params: unknown log level %q", level)
	}
	c.sess.SetLogLevel(n)
	return Object{}, nil
}

func (s *Server) discover(c *Call) (any, error) {
	res := Object{
		"supportedVersions": supportedModern,
		"capabilities":      s.capabilities(true, c.caps),
	}
	if s.opts.Instructions != "" {
		res["instructions"] = s.opts.Instructions
	}
	s.addCacheHints(res)
	return res, nil
}

func (s *Server) subscribe(on bool) func(c *Call) (any, error) {
	return func(c *Call) (any, error) {
		uri, e := c.uriParam()
		if e != nil {
			return nil, e
		}
		switch err := c.sess.Subscribe(uri, on, s.subscriptionBudget()); {
		case errors.Is(err, session.ErrTooManySubscriptions):
			return nil, jsonrpc.InvalidParams("Invalid params: %v; unsubscribe from one first", err)
		case errors.Is(err, session.ErrClosed):
			return nil, session.NotFound()
		case err != nil:
			if e := limits.Refusal(err, subscriptionsWhat); e != nil {
				return nil, e
			}
			return nil, err
		}
		return Object{}, nil
	}
}

// MaxURIBytes bounds a resource URI in any request (a blob URI of the
// longest key, percent-encoded, is about 3 KiB).
const MaxURIBytes = 8 << 10

// uriParam is the required params.uri.
func (c *Call) uriParam() (string, *Error) {
	uri, err := jsonrpc.StringParam(c.params, "uri")
	if err != nil {
		return "", jsonrpc.InvalidParams("Invalid params: uri: %v", err)
	}
	if uri == "" {
		return "", jsonrpc.InvalidParams("Invalid params: uri is required")
	}
	if len(uri) > MaxURIBytes {
		return "", jsonrpc.InvalidParams("Invalid params: uri is longer than %d bytes", MaxURIBytes)
	}
	return uri, nil
}

// cursorParam is params.cursor; a list that has one page only accepts none.
func (c *Call) cursorParam(onePage bool) (string, *Error) {
	cursor, err := jsonrpc.StringParam(c.params, "cursor")
	if err != nil {
		return "", jsonrpc.InvalidParams("Invalid params: cursor: %v", err)
	}
	if onePage && cursor != "" {
		return "", jsonrpc.InvalidParams("Invalid params: invalid cursor")
	}
	return cursor, nil
}

func (s *Server) complete(c *Call) (any, error) {
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
	if e := c.param("ref", &p.Ref); e != nil {
		return nil, e
	}
	if e := c.param("argument", &p.Argument); e != nil {
		return nil, e
	}
	var complete CompleteFunc
	switch p.Ref.Type {
	case "ref/resource":
		for _, t := range s.templates {
			if t.URITemplate == p.Ref.URI {
				complete = t.Complete
			}
		}
	case "ref/prompt":
		if pr := s.prompt(p.Ref.Name); pr != nil {
			complete = pr.Complete
		}
	default:
		return nil, jsonrpc.InvalidParams("Invalid params: unknown ref type %q", p.Ref.Type)
	}
	res := Completion{Values: []string{}}
	if complete != nil {
		var err error
		if res, err = complete(c, p.Argument.Name, p.Argument.Value); err != nil {
			return nil, err
		}
	}
	return res.object(), nil
}

func (r Completion) object() Object {
	values, more := r.Values, r.HasMore
	if values == nil {
		values = []string{}
	}
	if len(values) > 100 {
		values, more = values[:100], true
	}
	o := Object{"values": values, "hasMore": more}
	if r.Total >= len(r.Values) || !more {
		o["total"] = max(r.Total, len(values))
	}
	return Object{"completion": o}
}

// FilterPrefix returns the values that start with prefix (a simple
// CompleteFunc body).
func FilterPrefix(all []string, prefix string) []string {
	out := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// MissingCapability is the 2026-07-28 -32021 error for client
// capabilities a request needs.
func MissingCapability(names ...string) *Error { return jsonrpc.MissingCapability(names...) }

// Prompts.

func (s *Server) prompt(name string) *Prompt {
	for _, p := range s.prompts {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (s *Server) promptsList(c *Call) (any, error) {
	if _, e := c.cursorParam(true); e != nil {
		return nil, e
	}
	items := make([]any, 0, len(s.prompts))
	for _, p := range s.prompts {
		items = append(items, p.object())
	}
	return Object{"prompts": items}, nil
}

func (s *Server) promptsGet(c *Call) (any, error) {
	var name string
	var args map[string]string
	if e := c.param("name", &name); e != nil {
		return nil, e
	}
	if e := c.param("arguments", &args); e != nil {
		return nil, e
	}
	p := s.prompt(name)
	if p == nil {
		return nil, jsonrpc.InvalidParams("Invalid params: unknown prompt %q", name)
	}
	res, err := p.Get(c, args)
	if err != nil {
		if o, ierr := s.inputOutcome(c, err); o != nil || ierr != nil {
			return o, ierr
		}
		return nil, err
	}
	return res, nil
}

// NotFound is the era's resource-not-found error (SEP-2164).
func (c *Call) NotFound(uri string) *Error {
	code := CodeResourceNotFound
	if c.modern {
		code = CodeInvalidParams
	}
	return jsonrpc.NewError(code, "Resource not found", Object{"uri": uri})
}

// InvalidParams is a -32602 error with a formatted message.
func InvalidParams(format string, args ...any) *Error { return jsonrpc.InvalidParams(format, args...) }
