package server

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/mcpblob/mcpblob/core/conformance"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// sseReader yields the JSON-RPC messages of an SSE body.
type sseReader struct {
	t  *testing.T
	br *bufio.Reader
	c  io.Closer
}

func (r *sseReader) next() (rpcMsg, bool) {
	r.t.Helper()
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return rpcMsg{}, false
		}
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: ")
		if !ok || data == "" {
			continue // priming events carry no data
		}
		var m rpcMsg
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			r.t.Fatalf("bad SSE data %q: %v", data, err)
		}
		return m, true
	}
}

type testClient struct {
	t    *testing.T
	base string
	hc   *http.Client
	sid  string
}

func (c *testClient) post(body string, hdr map[string]string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *testClient) call(body string, hdr map[string]string) (int, string) {
	c.t.Helper()
	resp := c.post(body, hdr)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (c *testClient) stream(resp *http.Response) *sseReader {
	c.t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("want an SSE response, got %d %q: %s", resp.StatusCode, ct, b)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	return &sseReader{t: c.t, br: bufio.NewReader(resp.Body), c: resp.Body}
}

func newTestClient(t *testing.T, opts Options, legacy bool) *testClient {
	base, _ := startTestServer(t, opts)
	c := &testClient{t: t, base: base, hc: &http.Client{Timeout: 20 * time.Second}}
	if legacy {
		c.sid = initSession(t, c.hc, base)
	}
	return c
}

func TestLegacyGetStreamNotifications(t *testing.T) {
	c := newTestClient(t, Options{}, true)
	if code, _ := c.call(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"blob:///docs/readme.txt"}}`, nil); code != 200 {
		t.Fatalf("subscribe: %d", code)
	}
	req, _ := http.NewRequest("GET", c.base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := c.stream(resp)
	// A second GET stream on the same session is refused.
	resp2, err := c.hc.Do(req.Clone(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusConflict {
		t.Fatalf("second GET stream: %d, want 409", resp2.StatusCode)
	}
	if code, body := c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_blob","arguments":{"key":"docs/readme.txt"}}}`, nil); code != 200 || !strings.Contains(body, `"deleted":true`) {
		t.Fatalf("delete_blob: %d %s", code, body)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		m, ok := events.next()
		if !ok {
			t.Fatalf("GET stream ended; saw %v", seen)
		}
		seen[m.Method] = true
		if m.Method == "notifications/resources/updated" && !strings.Contains(string(m.Params), "blob:///docs/readme.txt") {
			t.Fatalf("updated params %s", m.Params)
		}
	}
	if !seen["notifications/resources/updated"] || !seen["notifications/resources/list_changed"] {
		t.Fatalf("notifications seen: %v", seen)
	}
}

func TestLegacyElicitationRoundTrip(t *testing.T) {
	base, _ := startTestServer(t, Options{Extend: conformance.Register})
	c := &testClient{t: t, base: base, hc: &http.Client{Timeout: 20 * time.Second}}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`
	resp := c.post(body, nil)
	resp.Body.Close()
	c.sid = resp.Header.Get("Mcp-Session-Id")

	events := c.stream(c.post(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"who are you?"}}}`, nil))
	req, ok := events.next()
	if !ok || req.Method != "elicitation/create" || req.ID == nil {
		t.Fatalf("want an elicitation/create request first, got %+v", req)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}}`
	if code, _ := c.call(answer, nil); code != http.StatusAccepted {
		t.Fatalf("posting the answer: %d, want 202", code)
	}
	res, ok := events.next()
	if !ok || string(res.ID) != `"call-1"` || !strings.Contains(string(res.Result), "ada@example.com") {
		t.Fatalf("final result: %+v", res)
	}
}

func TestLegacyCancellation(t *testing.T) {
	base, _ := startTestServer(t, Options{Extend: conformance.Register})
	c := &testClient{t: t, base: base, hc: &http.Client{Timeout: 20 * time.Second}}
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	resp.Body.Close()
	c.sid = resp.Header.Get("Mcp-Session-Id")
	events := c.stream(c.post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}`, nil))
	if m, ok := events.next(); !ok || m.Method != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %+v", m)
	}
	if code, _ := c.call(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	if m, ok := events.next(); ok {
		t.Fatalf("cancelled request still answered: %+v", m)
	}
}

func TestModernListen(t *testing.T) {
	c := newTestClient(t, Options{}, false)
	hdr := func(method, name string) map[string]string {
		h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
		if name != "" {
			h["Mcp-Name"] = name
		}
		return h
	}
	events := c.stream(c.post(`{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["blob:///images/dot.bin"]},`+modernMeta+`}}`,
		hdr("subscriptions/listen", "")))
	ack, ok := events.next()
	if !ok || ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"sub-1"`) {
		t.Fatalf("ack: %+v %s", ack, ack.Params)
	}
	h := hdr("tools/call", "delete_blob")
	h["Mcp-Param-Blob-Key"] = "images/dot.bin"
	if code, body := c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_blob","arguments":{"key":"images/dot.bin"},`+modernMeta+`}}`, h); code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		m, ok := events.next()
		if !ok {
			t.Fatalf("listen stream ended; saw %v", seen)
		}
		if !strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":"sub-1"`) {
			t.Fatalf("untagged notification %s %s", m.Method, m.Params)
		}
		seen[m.Method] = true
	}
	if !seen["notifications/resources/updated"] || !seen["notifications/resources/list_changed"] {
		t.Fatalf("seen %v", seen)
	}
}

// TestShutdownEndsStreams checks that Shutdown ends an open GET stream and a
// listen stream (the latter with a final result) instead of waiting them out.
func TestShutdownEndsStreams(t *testing.T) {
	base, srv := startTestServer(t, Options{})
	c := &testClient{t: t, base: base, hc: &http.Client{Timeout: 20 * time.Second}}
	listen := c.stream(c.post(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+modernMeta+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}))
	if m, ok := listen.next(); !ok || m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("ack: %+v", m)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	m, ok := listen.next()
	if !ok || string(m.ID) != "9" || m.Result == nil {
		t.Fatalf("want a final listen result, got %+v (ok=%v)", m, ok)
	}
}

// TestLegacyResume drives SEP-1699: the server ends the POST's connection
// after the priming event, the client resumes with GET + Last-Event-ID and
// receives the result there; replaying from the start of the stream again
// repeats the stored events.
func TestLegacyResume(t *testing.T) {
	c := newTestClient(t, Options{Extend: conformance.Register}, true)
	resp := c.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}`, nil)
	body, err := io.ReadAll(resp.Body) // the server closes it mid-call
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(body), "\n")
	lastID, ok := strings.CutPrefix(first, "id: ")
	if !ok || !strings.Contains(string(body), "retry: ") || strings.Contains(string(body), `"result"`) {
		t.Fatalf("want only a priming event, got %q", body)
	}
	get := func(lastEventID string) string {
		req, _ := http.NewRequest("GET", c.base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Last-Event-ID", lastEventID)
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	got := get(lastID)
	if !strings.Contains(got, `"id":3,"result"`) || !strings.Contains(got, "Reconnection test completed") {
		t.Fatalf("resumed stream: %q", got)
	}
	if again := get(lastID); again != got {
		t.Fatalf("second replay differs:\n%q\n%q", again, got)
	}
}
