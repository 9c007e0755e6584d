package mcptest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Request is one HTTP request of a Client and the JSON-RPC message it
// carries. ID is nil for raw bodies, notifications, replies and GETs.
type Request struct {
	*http.Request
	ID        json.RawMessage
	RPCMethod string // the JSON-RPC method, "" for raw bodies and GETs
	Params    string // as the caller gave them, without the client's _meta
	// first is the params of the round that began an MRTR exchange (set
	// on retries; Params then holds that round's state and responses).
	first string
}

// NewRequest builds the POST of method with params (a JSON object, ""
// for none) and the next numeric id.
func (c *Client) NewRequest(ctx context.Context, method, params string) *Request {
	return c.NewRequestID(ctx, c.nextID(), method, params)
}

// NewRequestID is NewRequest with the JSON id given (e.g. `"call-1"`).
func (c *Client) NewRequestID(ctx context.Context, id, method, params string) *Request {
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":` + jsonString(method) + `,"params":` + c.WithMeta(params) + `}`
	r := &Request{Request: c.post(ctx, strings.NewReader(body), int64(len(body))), ID: json.RawMessage(id),
		RPCMethod: method, Params: params}
	c.setMethod(r.Request, method, params)
	c.setExtra(r.Request)
	return r
}

// NewNotification builds the POST of notification method with params.
func (c *Client) NewNotification(ctx context.Context, method, params string) *Request {
	body := `{"jsonrpc":"2.0","method":` + jsonString(method) + `,"params":` + c.WithMeta(params) + `}`
	r := &Request{Request: c.post(ctx, strings.NewReader(body), int64(len(body))), RPCMethod: method, Params: params}
	c.setMethod(r.Request, method, params)
	c.setExtra(r.Request)
	return r
}

// NewReply builds the POST answering the server's request id
// (elicitation/create, sampling/createMessage) with result, a JSON value.
func (c *Client) NewReply(ctx context.Context, id json.RawMessage, result string) *Request {
	body := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	r := &Request{Request: c.post(ctx, strings.NewReader(body), int64(len(body)))}
	c.setExtra(r.Request)
	return r
}

// NewRaw builds a POST whose body is sent as is (size -1: unknown,
// chunked), with the era's headers but no Mcp-Method or Mcp-Name.
func (c *Client) NewRaw(ctx context.Context, body io.Reader, size int64) *Request {
	r := &Request{Request: c.post(ctx, body, size)}
	c.setExtra(r.Request)
	return r
}

// NewGet builds the 2025-11-25 GET of the session's SSE stream; a
// lastEventID resumes a stream.
func (c *Client) NewGet(ctx context.Context, lastEventID string) *Request {
	req := c.newHTTP(ctx, http.MethodGet, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	c.setExtra(req)
	return &Request{Request: req}
}

// NewDelete builds the 2025-11-25 DELETE that ends the session.
func (c *Client) NewDelete(ctx context.Context) *Request {
	req := c.newHTTP(ctx, http.MethodDelete, nil)
	c.setExtra(req)
	return &Request{Request: req}
}

func (c *Client) post(ctx context.Context, body io.Reader, size int64) *http.Request {
	req := c.newHTTP(ctx, http.MethodPost, body)
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req
}

// newHTTP is a request with the era's headers. The endpoint is the
// caller's: a bad one is a bug in the test, and panics.
func (c *Client) newHTTP(ctx context.Context, method string, body io.Reader) *http.Request {
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Endpoint, body)
	if err != nil {
		panic("mcptest: " + err.Error())
	}
	switch {
	case c.Modern():
		req.Header.Set("MCP-Protocol-Version", Version20260728)
	case c.Session != "" || c.initialized: // not on initialize
		req.Header.Set("MCP-Protocol-Version", Version20251125)
	}
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
	}
	return req
}

// setMethod mirrors the body in Mcp-Method and Mcp-Name (2026-07-28).
func (c *Client) setMethod(req *http.Request, method, params string) {
	if !c.Modern() {
		return
	}
	req.Header.Set("Mcp-Method", method)
	if name, ok := nameOf(method, params); ok {
		req.Header.Set("Mcp-Name", HeaderValue(name))
	}
}

func (c *Client) setExtra(req *http.Request) {
	for k, v := range c.Header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
}

// WithMeta returns params (a JSON object, "" for none) as c sends them:
// for 2026-07-28, with the client's _meta members first (merged into a
// leading _meta object of params). For bodies built by hand.
func (c *Client) WithMeta(params string) string {
	if params == "" {
		params = "{}"
	}
	if !c.Modern() {
		return params
	}
	params = strings.TrimSpace(params)
	fields := `"io.modelcontextprotocol/protocolVersion":"` + Version20260728 +
		`","io.modelcontextprotocol/clientCapabilities":` + c.caps()
	if rest, ok := strings.CutPrefix(params, `{"_meta":{`); ok {
		if !strings.HasPrefix(rest, "}") {
			fields += ","
		}
		return `{"_meta":{` + fields + rest
	}
	if rest := strings.TrimSpace(strings.TrimPrefix(params, "{")); strings.HasPrefix(rest, "}") {
		return `{"_meta":{` + fields + `}` + rest
	}
	return `{"_meta":{` + fields + `},` + params[1:]
}

// nameOf returns the params member Mcp-Name mirrors for method, if the
// method has one.
func nameOf(method, params string) (string, bool) {
	member := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
		"tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}[method]
	if member == "" {
		return "", false
	}
	var m map[string]json.RawMessage
	var v string
	if json.Unmarshal([]byte(params), &m) != nil || json.Unmarshal(m[member], &v) != nil {
		return "", false
	}
	return v, true
}

// HeaderValue is v as an Mcp-Name or Mcp-Param-* header carries it: as is
// when it is plain printable ASCII, else in the "=?base64?…?=" form. A plain
// value that itself starts with "=?base64?" is encoded too, or the server
// would decode it.
func HeaderValue(v string) string {
	plain := v == strings.TrimSpace(v) && !strings.HasPrefix(v, "=?base64?")
	for i := 0; i < len(v) && plain; i++ {
		plain = v[i] >= 0x20 && v[i] <= 0x7e
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
