package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A small MCP client of either protocol era for the hardening tests (disk
// full, slow bodies): raw JSON-RPC over POST /mcp, JSON or SSE answers.

// hzRPC is the part of a JSON-RPC message the hardening tests look at.
type hzRPC struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// hzClient is one MCP client: a 2025-11-25 session, or 2026-07-28 requests.
type hzClient struct {
	t      *testing.T
	hc     *http.Client
	base   string
	modern bool
	caps   string
	sid    string
	hdr    map[string]string // sent with every request (Authorization)
}

// newHZClient starts a client of the era; a 2025-11-25 one initializes its
// session with caps.
func newHZClient(t *testing.T, base string, modern bool, caps string, hdr map[string]string) *hzClient {
	t.Helper()
	c := &hzClient{t: t, hc: &http.Client{}, base: base, modern: modern, caps: caps, hdr: hdr}
	if !modern {
		resp := c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"hz","version":"1"}}}`, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if c.sid = resp.Header.Get("Mcp-Session-Id"); c.sid == "" {
			t.Fatalf("initialize: %d, no session", resp.StatusCode)
		}
	}
	return c
}

// body builds a request with id; params is an object's inside (without
// braces); the 2026-07-28 _meta is added.
func (c *hzClient) body(id, method, params string) string {
	if c.modern {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + c.caps + `}`
		if params == "" {
			params = meta
		} else {
			params = meta + "," + params
		}
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + `}}`
}

// headers are the era's headers for a call of method (on tool name).
func (c *hzClient) headers(method, name string) map[string]string {
	h := map[string]string{}
	for k, v := range c.hdr {
		h[k] = v
	}
	if c.modern {
		h["MCP-Protocol-Version"] = "2026-07-28"
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
	} else {
		h["MCP-Protocol-Version"] = "2025-11-25"
		h["Mcp-Session-Id"] = c.sid
	}
	return h
}

// send POSTs body to /mcp with hdr and returns the open response.
func (c *hzClient) send(body string, hdr map[string]string) *http.Response {
	c.t.Helper()
	return c.sendReader(strings.NewReader(body), hdr)
}

func (c *hzClient) sendReader(body io.Reader, hdr map[string]string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.base+"/mcp", body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("POST /mcp: %v", err)
	}
	return resp
}

// call sends a request and returns the response with its id, from a JSON
// body or an SSE stream.
func (c *hzClient) call(id, method, name, params string, extra map[string]string) (int, hzRPC) {
	c.t.Helper()
	hdr := c.headers(method, name)
	for k, v := range extra {
		hdr[k] = v
	}
	resp := c.send(c.body(id, method, params), hdr)
	defer resp.Body.Close()
	ev := &hzEvents{r: bufio.NewReader(resp.Body), sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")}
	for {
		m, ok := ev.next()
		if !ok {
			c.t.Fatalf("%s %s: no response with id %s (status %d)", method, name, id, resp.StatusCode)
		}
		if m.Method == "" && (string(m.ID) == id || !ev.sse) {
			return resp.StatusCode, m // a JSON body is the answer, whatever its id
		}
	}
}

// hzEvents reads JSON-RPC messages from a JSON body (one) or an SSE stream.
type hzEvents struct {
	r    *bufio.Reader
	sse  bool
	done bool
}

func (e *hzEvents) next() (hzRPC, bool) {
	var m hzRPC
	if e.done {
		return m, false
	}
	if !e.sse {
		e.done = true
		b, _ := io.ReadAll(e.r)
		return m, json.Unmarshal(b, &m) == nil
	}
	var data strings.Builder
	for {
		line, err := e.r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data.WriteString(strings.TrimPrefix(d, " "))
		}
		if line == "" && data.Len() > 0 {
			if json.Unmarshal([]byte(data.String()), &m) == nil {
				return m, true
			}
			data.Reset()
		}
		if err != nil {
			e.done = true
			return m, false
		}
	}
}

// toolOutcome is a tools/call answer reduced to what the tests compare:
// a JSON-RPC error code, or isError and the text.
type toolOutcome struct {
	code    int
	isError bool
	text    string
	key     string
}

func outcomeOf(m hzRPC) toolOutcome {
	if m.Error != nil {
		return toolOutcome{code: m.Error.Code, text: m.Error.Message}
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent struct {
			Key string `json:"key"`
		} `json:"structuredContent"`
	}
	_ = json.Unmarshal(m.Result, &r)
	o := toolOutcome{isError: r.IsError, key: r.StructuredContent.Key}
	if len(r.Content) > 0 {
		o.text = r.Content[0].Text
	}
	return o
}
