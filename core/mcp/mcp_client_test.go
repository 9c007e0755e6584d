package mcp

// An in-memory MCP client for tests: requests go straight to
// Server.ServeMCP and responses land in a recorder, so a whole exchange
// runs in-process without sockets. It speaks both eras: 2025-11-25
// (initialize, then the session header on every request) and 2026-07-28
// (params._meta on every request, mirrored in MCP-Protocol-Version,
// Mcp-Method and Mcp-Name).

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
)

// recorder is a ResponseWriter that keeps the response in memory. A
// streamed body is written at once, on the caller's goroutine.
type recorder struct {
	mu       sync.Mutex
	status   int
	header   HeaderMap
	body     bytes.Buffer
	size     int64 // the declared length of a streamed body (-1: unknown)
	streamed bool
	flushes  int
	err      error // what the stream's write func returned
}

func newRecorder() *recorder { return &recorder{header: HeaderMap{}} }

func (r *recorder) SetStatus(code int)           { r.status = code }
func (r *recorder) SetHeader(name, value string) { r.header[name] = value }
func (r *recorder) SetBody(b []byte)             { r.body.Write(b) }

func (r *recorder) SetBodyStream(size int64, write func(StreamWriter) error) {
	r.size, r.streamed = size, true
	r.err = write(recorderStream{r})
}

// recorderStream is the StreamWriter a streamed body writes to.
type recorderStream struct{ r *recorder }

func (s recorderStream) Write(p []byte) (int, error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.r.body.Write(p)
}

func (s recorderStream) Flush() error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.flushes++
	return nil
}

// statusCode is the HTTP status sent (200 when none was set).
func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// rpcError is a JSON-RPC error object as received.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// rpcMessage is any JSON-RPC message as received.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// response is one HTTP response: its recorder, the messages of its body
// (the JSON message, or every SSE event's), and the final response.
type response struct {
	rec  *recorder
	msgs []rpcMessage
	rpcMessage
}

// testClient talks to a Server in one era.
type testClient struct {
	t         *testing.T
	s         *Server
	modern    bool
	sid       string
	caps      string // the client capabilities object
	principal string
	nextID    int
}

// newModernClient is a 2026-07-28 client: no handshake.
func newModernClient(t *testing.T, s *Server) *testClient {
	return &testClient{t: t, s: s, modern: true, caps: `{"elicitation":{}}`}
}

// newLegacyClient is a 2025-11-25 client with a session.
func newLegacyClient(t *testing.T, s *Server) *testClient {
	t.Helper()
	return newLegacyClientAs(t, s, "")
}

// as returns a client of the same era for another principal (a new
// session in 2025-11-25).
func (c *testClient) as(principal string) *testClient {
	c.t.Helper()
	if !c.modern {
		return newLegacyClientAs(c.t, c.s, principal)
	}
	return &testClient{t: c.t, s: c.s, modern: true, caps: c.caps, principal: principal}
}

func newLegacyClientAs(t *testing.T, s *Server, principal string) *testClient {
	t.Helper()
	c := &testClient{t: t, s: s, caps: `{"elicitation":{}}`, principal: principal}
	res := c.post(HeaderMap{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+c.caps+
			`,"clientInfo":{"name":"test","version":"1"}}}`))
	c.sid = res.rec.header.Get(headers.SessionID)
	if res.Error != nil || c.sid == "" {
		t.Fatalf("initialize: %s (session %q)", res.rec.body.String(), c.sid)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res.Result, &init); err != nil || init.ProtocolVersion != Version20251125 {
		t.Fatalf("initialize result %s", res.Result)
	}
	n := c.post(c.headers("notifications/initialized", ""), strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if n.rec.statusCode() != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", n.rec.statusCode())
	}
	return c
}

// message returns a request with a fresh id; params is a JSON object
// (its member order is kept), to which a 2026-07-28 client adds _meta.
func (c *testClient) message(method, params string) string {
	c.nextID++
	if c.modern {
		meta := `"_meta":{"` + metaProtocolVersion + `":"` + VersionModern + `","` + metaClientCapabilities + `":` + c.caps + `}`
		inner := strings.TrimSpace(params)[1:]
		if strings.TrimSpace(inner) == "}" {
			params = "{" + meta + "}"
		} else {
			params = "{" + meta + "," + inner
		}
	}
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(c.nextID) + `,"method":"` + method + `","params":` + params + `}`
}

// headers are the request headers of method; name is what Mcp-Name
// mirrors (2026-07-28), "" for none.
func (c *testClient) headers(method, name string) HeaderMap {
	h := HeaderMap{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if c.modern {
		h[headers.ProtocolVersion] = VersionModern
		h[headers.Method] = method
		if name != "" {
			h[headers.Name] = name
		}
	} else {
		h[headers.SessionID] = c.sid
		h[headers.ProtocolVersion] = Version20251125
	}
	return h
}

// post sends one request body and reads the response.
func (c *testClient) post(h HeaderMap, body io.Reader) *response {
	c.t.Helper()
	rec := newRecorder()
	c.s.ServeMCP(&Request{Method: http.MethodPost, Header: h, Body: body, Principal: c.principal}, rec)
	return c.parse(rec)
}

// request sends method with params (see message).
func (c *testClient) request(method, name, params string) *response {
	c.t.Helper()
	return c.post(c.headers(method, name), strings.NewReader(c.message(method, params)))
}

// callTool calls a tool; name comes before the arguments in the message.
func (c *testClient) callTool(name, args string, more ...string) *response {
	c.t.Helper()
	params := `{"name":` + string(jsonString(name)) + `,"arguments":` + args
	for _, m := range more {
		params += "," + m
	}
	return c.request("tools/call", name, params+"}")
}

// parse reads the recorded body: one JSON message, or SSE events. It
// checks that a streamed body has its declared length.
func (c *testClient) parse(rec *recorder) *response {
	c.t.Helper()
	res := &response{rec: rec}
	if rec.err != nil {
		c.t.Fatalf("writing the body failed: %v", rec.err)
	}
	if rec.streamed && rec.size >= 0 && int64(rec.body.Len()) != rec.size {
		c.t.Fatalf("Content-Length %d but %d bytes written", rec.size, rec.body.Len())
	}
	body := rec.body.Bytes()
	if strings.HasPrefix(rec.header.Get("Content-Type"), "text/event-stream") {
		for _, ev := range strings.Split(string(body), "\n\n") {
			var data strings.Builder
			for _, line := range strings.Split(ev, "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok {
					data.WriteString(strings.TrimPrefix(d, " "))
				}
			}
			if data.Len() > 0 {
				res.msgs = append(res.msgs, c.decode([]byte(data.String())))
			}
		}
	} else if len(bytes.TrimSpace(body)) > 0 {
		res.msgs = append(res.msgs, c.decode(body))
	}
	for _, m := range res.msgs {
		if m.Method == "" && (m.Result != nil || m.Error != nil) {
			res.rpcMessage = m
		}
	}
	return res
}

func (c *testClient) decode(b []byte) rpcMessage {
	c.t.Helper()
	var m rpcMessage
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("response is not JSON: %v\n%.500s", err, b)
	}
	return m
}

// toolResult is a CallToolResult as received.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
	InputRequests     map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// tool decodes the response as a CallToolResult; a JSON-RPC error fails
// the test.
func (r *response) tool(t *testing.T) toolResult {
	t.Helper()
	if r.Error != nil || r.Result == nil {
		t.Fatalf("no result: %s", r.rec.body.String())
	}
	var tr toolResult
	if err := json.Unmarshal(r.Result, &tr); err != nil {
		t.Fatalf("result: %v: %s", err, r.Result)
	}
	return tr
}

// text is the text of the first content block.
func (tr toolResult) text() string {
	if len(tr.Content) == 0 {
		return ""
	}
	return tr.Content[0].Text
}

// testImpl is the serverInfo of the tests' servers.
var testImpl = Implementation{Name: "mcp-test", Version: "1"}
