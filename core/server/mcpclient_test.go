package server

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Protocol versions the test client speaks (docs/protocol.md).
const (
	legacyVersion = "2025-11-25" // initialize, Mcp-Session-Id
	modernVersion = "2026-07-28" // stateless, per-request _meta
)

// streamCaps declares resourceStreaming up to 1 GiB.
const streamCaps = `{"resourceStreaming":{"maxStreamSize":1073741824}}`

// mcpClient is the package's one MCP test client. It speaks either protocol
// era to an /mcp endpoint over Streamable HTTP (docs/protocol.md):
//
//   - 2025-11-25: newMCPClient sends initialize and notifications/initialized;
//     later requests carry Mcp-Session-Id and MCP-Protocol-Version.
//   - 2026-07-28: no session; the client puts protocolVersion and
//     clientCapabilities first in every params._meta and mirrors the body in
//     MCP-Protocol-Version, Mcp-Method and, where the spec asks for it,
//     Mcp-Name. Mcp-Param-* headers come from the test (see with).
//
// A client reports failures to the test it was made for; a subtest takes
// its own copy with in. A request is built (request, requestID, raw, get)
// and then sent: send
// reads the whole response and decodes its JSON-RPC message (JSON body or
// SSE events), open leaves a huge body to the caller, events reads an SSE
// body message by message. call, callTool, readResource, streamResource,
// retry (MRTR), notify and reply are the one-line forms. Redirects are not
// followed: a 302 is a result for the test to check. Failures to talk to the
// server end the test; statuses and JSON-RPC errors are for the test to judge.
type mcpClient struct {
	t       testing.TB
	url     string // the /mcp endpoint
	hc      *http.Client
	version string            // legacyVersion or modernVersion
	caps    string            // client capabilities, a JSON object
	sid     string            // the 2025-11-25 session
	init    rpcMsg            // the initialize response (2025-11-25)
	extra   map[string]string // headers set last, see with
	ids     *atomic.Int64
}

// newMCPClient connects to the server at base ("http://host:port") as a
// client of version declaring caps; a 2025-11-25 client opens its session.
func newMCPClient(t testing.TB, base, version, caps string) *mcpClient {
	t.Helper()
	return newMCPClientWith(t, base, version, caps, nil)
}

// newMCPClientWith is newMCPClient for a client that sends hdr with every
// request, initialize included (Authorization on a server with API keys).
func newMCPClientWith(t testing.TB, base, version, caps string, hdr map[string]string) *mcpClient {
	t.Helper()
	tr := &http.Transport{DisableCompression: true, ResponseHeaderTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	c := &mcpClient{
		t:   t,
		url: base + "/mcp",
		hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		version: version,
		caps:    caps,
		extra:   hdr,
		ids:     new(atomic.Int64),
	}
	switch version {
	case modernVersion:
	case legacyVersion:
		r := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"mcpblob-test","version":"1"}}`)
		c.sid, c.init = r.header.Get("Mcp-Session-Id"), r.msg
		if r.status != http.StatusOK || c.sid == "" || r.msg.Result == nil {
			t.Fatalf("initialize: status %d, session %q: %.300s", r.status, c.sid, r.body)
		}
		if r := c.notify("notifications/initialized", ""); r.status != http.StatusAccepted {
			t.Fatalf("notifications/initialized: status %d: %.300s", r.status, r.body)
		}
	default:
		t.Fatalf("bug: protocol version %q", version)
	}
	return c
}

// serveMCP starts a server with opts and connects a client to it.
func serveMCP(t *testing.T, opts Options, version, caps string) *mcpClient {
	t.Helper()
	base, _ := startTestServer(t, opts)
	return newMCPClient(t, base, version, caps)
}

// with returns a client that sets h's headers on every request, after its
// own (an empty value removes a header). It shares the session and ids.
func (c *mcpClient) with(h map[string]string) *mcpClient {
	d := *c
	d.extra = make(map[string]string, len(c.extra)+len(h))
	for k, v := range c.extra {
		d.extra[k] = v
	}
	for k, v := range h {
		d.extra[k] = v
	}
	return &d
}

// in returns the client for use in test t, typically a subtest: failures
// are reported there (FailNow must run on the test's own goroutine).
func (c *mcpClient) in(t testing.TB) *mcpClient {
	d := *c
	d.t = t
	return &d
}

// mcpRequest is one HTTP request of an mcpClient and the JSON-RPC request
// it carries (id is nil for raw bodies, notifications, replies and GETs).
type mcpRequest struct {
	*http.Request
	id     json.RawMessage
	method string
	params string // as the test gave them, without the client's _meta
}

// request builds the POST of method with params (a JSON object, "" for
// none) and the next numeric id.
func (c *mcpClient) request(method, params string) *mcpRequest {
	return c.requestID(strconv.FormatInt(c.ids.Add(1), 10), method, params)
}

// requestID is request with the JSON id given (e.g. `"call-1"` or `7`).
func (c *mcpClient) requestID(id, method, params string) *mcpRequest {
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":` + jsonString(method) + `,"params":` + c.meta(params) + `}`
	r := &mcpRequest{Request: c.post(strings.NewReader(body), int64(len(body))), id: json.RawMessage(id), method: method, params: params}
	if c.version == modernVersion {
		r.Header.Set("Mcp-Method", method)
		if name, ok := nameOf(method, params); ok {
			r.Header.Set("Mcp-Name", headerValue(name))
		}
	}
	c.setExtra(r.Request)
	return r
}

// raw builds a POST whose body is sent as is (size -1: unknown, chunked),
// with the era's headers but no Mcp-Method or Mcp-Name.
func (c *mcpClient) raw(body io.Reader, size int64) *mcpRequest {
	r := &mcpRequest{Request: c.post(body, size)}
	c.setExtra(r.Request)
	return r
}

// get builds the 2025-11-25 GET of the session's SSE stream; a lastEventID
// resumes a stream (SEP-1699).
func (c *mcpClient) get(lastEventID string) *mcpRequest {
	req, err := http.NewRequest("GET", c.url, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	c.setEra(req)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	c.setExtra(req)
	return &mcpRequest{Request: req}
}

func (c *mcpClient) post(body io.Reader, size int64) *http.Request {
	req, err := http.NewRequest("POST", c.url, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.setEra(req)
	return req
}

func (c *mcpClient) setEra(req *http.Request) {
	switch {
	case c.version == modernVersion:
		req.Header.Set("MCP-Protocol-Version", modernVersion)
	case c.sid != "": // not on initialize
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", legacyVersion)
	}
}

func (c *mcpClient) setExtra(req *http.Request) {
	for k, v := range c.extra {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
}

// meta returns params with, for 2026-07-28, the client's _meta members
// first (merged into a leading _meta object of params).
func (c *mcpClient) meta(params string) string {
	if params == "" {
		params = "{}"
	}
	if c.version != modernVersion {
		return params
	}
	fields := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + c.caps
	if rest, ok := strings.CutPrefix(params, `{"_meta":{`); ok {
		if !strings.HasPrefix(rest, "}") {
			fields += ","
		}
		return `{"_meta":{` + fields + rest
	}
	if rest := strings.TrimPrefix(params, "{"); strings.HasPrefix(rest, "}") {
		return `{"_meta":{` + fields + `}` + rest
	}
	return `{"_meta":{` + fields + `},` + params[1:]
}

// nameOf returns the params member Mcp-Name mirrors for method, if the
// method has one (tools/call, prompts/get, resources/read, tasks/*).
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

// headerValue carries a value that is not plain printable ASCII in the
// "=?base64?…?=" form (SEP-2243).
func headerValue(v string) string {
	plain := v == strings.TrimSpace(v)
	for i := 0; i < len(v) && plain; i++ {
		plain = v[i] >= 0x20 && v[i] <= 0x7e
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// open sends r and returns the response with its body unread (closed when
// the test ends): for bodies too big to hold.
func (c *mcpClient) open(r *mcpRequest) *http.Response {
	c.t.Helper()
	resp := c.do(r)
	c.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (c *mcpClient) do(r *mcpRequest) *http.Response {
	c.t.Helper()
	resp, err := c.hc.Do(r.Request)
	if err != nil {
		c.t.Fatalf("%s %s: %v", r.Method, r.label(), err)
	}
	return resp
}

func (r *mcpRequest) label() string {
	if r.method != "" {
		return r.method
	}
	return r.URL.Path
}

// send sends r and reads the whole response. A JSON body is decoded into
// msg, and so is the response event of an SSE body (events reads the
// messages before it); the body of a resources/stream answer (marked by
// MCP-Resource-Uri) is the blob's bytes, whatever their type, and is not.
func (c *mcpClient) send(r *mcpRequest) *mcpResponse {
	c.t.Helper()
	resp := c.do(r)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.t.Fatalf("%s: reading the response: %v", r.label(), err)
	}
	out := &mcpResponse{httpResp: httpResp{resp.StatusCode, resp.Header, body}, t: c.t, req: r}
	mt := mediaType(resp.Header)
	if resp.Header.Get("MCP-Resource-Uri") != "" {
		mt = "" // a resources/stream answer: the blob's bytes (or a redirect), whatever their type
	}
	switch mt {
	case "application/json":
		if len(body) > 0 {
			if err := json.Unmarshal(body, &out.msg); err != nil {
				c.t.Fatalf("%s: bad JSON response %d: %v: %.300q", r.label(), resp.StatusCode, err, body)
			}
			checkID(c.t, r, out.msg)
		}
	case "text/event-stream":
		s := &sseStream{t: c.t, br: bufio.NewReader(bytes.NewReader(body)), req: r}
		for {
			m, ok := s.next()
			if !ok {
				break
			}
			if m.Method == "" {
				checkID(c.t, r, m)
				out.msg = m
			}
		}
	}
	return out
}

// events sends r, which must be answered with SSE, and returns the stream
// to read message by message (closed when the test ends).
func (c *mcpClient) events(r *mcpRequest) *sseStream {
	c.t.Helper()
	resp := c.open(r)
	if mediaType(resp.Header) != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("%s: want an SSE response, got %d %q: %.300s", r.label(), resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return &sseStream{t: c.t, br: bufio.NewReader(resp.Body), req: r}
}

func mediaType(h http.Header) string {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt
}

// call sends one request and reads the response.
func (c *mcpClient) call(method, params string) *mcpResponse {
	c.t.Helper()
	return c.send(c.request(method, params))
}

// callTool calls tool name with args, a JSON object sent as is (member
// order matters to the streaming scanner).
func (c *mcpClient) callTool(name, args string) *mcpResponse {
	c.t.Helper()
	return c.call("tools/call", `{"name":`+jsonString(name)+`,"arguments":`+args+`}`)
}

// readResource sends resources/read of uri.
func (c *mcpClient) readResource(uri string) *mcpResponse {
	c.t.Helper()
	return c.call("resources/read", `{"uri":`+jsonString(uri)+`}`)
}

// streamResource sends resources/stream of uri (mcpblob's byte-plane
// extension): the answer is the bytes, a redirect or a JSON-RPC message.
func (c *mcpClient) streamResource(uri string) *mcpResponse {
	c.t.Helper()
	return c.call("resources/stream", `{"uri":`+jsonString(uri)+`}`)
}

// retry answers prev, an InputRequiredResult (2026-07-28 MRTR), by sending
// its request again with prev's requestState and inputResponses (a JSON
// object) after the original params, state first.
func (c *mcpClient) retry(prev *mcpResponse, inputResponses string) *mcpResponse {
	c.t.Helper()
	var res struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if prev.msg.Result == nil || json.Unmarshal(prev.msg.Result, &res) != nil || res.ResultType != "input_required" {
		c.t.Fatalf("retry: not an InputRequiredResult: %.500q", prev.body)
	}
	params := strings.TrimSuffix(strings.TrimSpace(prev.req.params), "}")
	if !strings.HasSuffix(strings.TrimSpace(params), "{") {
		params += ","
	}
	params += `"requestState":` + jsonString(res.RequestState) + `,"inputResponses":` + inputResponses + `}`
	return c.call(prev.req.method, params)
}

// notify sends a notification (the server answers 202).
func (c *mcpClient) notify(method, params string) *mcpResponse {
	c.t.Helper()
	body := `{"jsonrpc":"2.0","method":` + jsonString(method) + `,"params":` + c.meta(params) + `}`
	r := &mcpRequest{Request: c.post(strings.NewReader(body), int64(len(body))), method: method, params: params}
	c.setExtra(r.Request)
	return c.send(r)
}

// reply answers the server's request id (elicitation/create,
// sampling/createMessage) with result, a JSON object.
func (c *mcpClient) reply(id json.RawMessage, result string) *mcpResponse {
	c.t.Helper()
	body := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	r := &mcpRequest{Request: c.post(strings.NewReader(body), int64(len(body)))}
	c.setExtra(r.Request)
	return c.send(r)
}

// httpResp is a finished HTTP exchange.
type httpResp struct {
	status int
	header http.Header
	body   []byte
}

func (r httpResp) sum() string { return hexSum(r.body) }

// mcpResponse is the answer to one mcpRequest.
type mcpResponse struct {
	httpResp
	msg rpcMsg // the JSON-RPC response, zero if there is none
	t   testing.TB
	req *mcpRequest
}

// tool decodes msg as a CallToolResult and fails the test if msg is not a
// result.
func (r *mcpResponse) tool() toolResult {
	r.t.Helper()
	if r.msg.Result == nil {
		r.t.Fatalf("%s: not a result: %d %.500q", r.req.label(), r.status, r.body)
	}
	return decodeTool(r.t, r.msg)
}

// rpcErr is a JSON-RPC error object.
type rpcErr struct {
	Code    int
	Message string
	Data    map[string]any
}

// rpcError decodes msg as a JSON-RPC error and fails the test if it is not
// one.
func (r *mcpResponse) rpcError() rpcErr {
	r.t.Helper()
	var e rpcErr
	if r.msg.Error == nil || json.Unmarshal(r.msg.Error, &e) != nil {
		r.t.Fatalf("%s: want a JSON-RPC error, got %d %.300q", r.req.label(), r.status, r.body)
	}
	return e
}

// rpcMsg is any JSON-RPC message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// toolResult is the part of a CallToolResult the tests look at.
type toolResult struct {
	IsError           bool `json:"isError"`
	Content           []struct{ Type, Text, URI string }
	StructuredContent struct {
		URI, Key, SHA256, MimeType string
		Size                       int64
	}
	ResultType   string          `json:"resultType"`
	RequestState string          `json:"requestState"`
	InputRequest json.RawMessage `json:"inputRequests"`
}

// toolOutcome is a tools/call answer reduced to what the hardening tests
// compare: a JSON-RPC error code (and message), or isError and the text.
type toolOutcome struct {
	code    int
	isError bool
	text    string
	key     string
}

// outcomeOf reduces m, a response, to a toolOutcome (zero if it is none).
func outcomeOf(m rpcMsg) toolOutcome {
	var e rpcErr
	if m.Error != nil && json.Unmarshal(m.Error, &e) == nil {
		return toolOutcome{code: e.Code, text: e.Message}
	}
	var r toolResult
	_ = json.Unmarshal(m.Result, &r)
	o := toolOutcome{isError: r.IsError, key: r.StructuredContent.Key}
	if len(r.Content) > 0 {
		o.text = r.Content[0].Text
	}
	return o
}

func decodeTool(t testing.TB, m rpcMsg) toolResult {
	t.Helper()
	var r toolResult
	if m.Result == nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("not a tool result: %+v", m)
	}
	return r
}

// checkID fails the test if m answers a request other than r.
func checkID(t testing.TB, r *mcpRequest, m rpcMsg) {
	t.Helper()
	if r.id != nil && m.ID != nil && m.Method == "" && !bytes.Equal(m.ID, r.id) {
		t.Fatalf("%s: response id %s, want %s", r.label(), m.ID, r.id)
	}
}

// sseStream reads the JSON-RPC messages of an SSE body.
type sseStream struct {
	t   testing.TB
	br  *bufio.Reader
	req *mcpRequest
}

// next returns the next message, skipping events without data (priming);
// false at the end of the stream.
func (s *sseStream) next() (rpcMsg, bool) {
	s.t.Helper()
	var data []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil && line == "" {
			return rpcMsg{}, false
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			if field, value, _ := strings.Cut(line, ":"); field == "data" {
				data = append(data, strings.TrimPrefix(value, " "))
			}
			if err == nil {
				continue
			}
		}
		// An event ends at a blank line (or, cut short, at the end).
		if d := strings.Join(data, "\n"); d != "" {
			var m rpcMsg
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				s.t.Fatalf("bad SSE data %q: %v", d, err)
			}
			return m, true
		}
		data = data[:0]
		if err != nil {
			return rpcMsg{}, false
		}
	}
}

// result reads up to the response to the stream's request and returns it
// with the messages sent before it (notifications and server requests).
func (s *sseStream) result() (rpcMsg, []rpcMsg) {
	s.t.Helper()
	var before []rpcMsg
	for {
		m, ok := s.next()
		if !ok {
			s.t.Fatalf("%s: the stream ended without a response; before it: %v", s.req.label(), before)
		}
		if m.Method != "" {
			before = append(before, m)
			continue
		}
		checkID(s.t, s.req, m)
		return m, before
	}
}

// toolResult is result for a tools/call: it fails the test unless the
// response is a result.
func (s *sseStream) toolResult() (toolResult, []rpcMsg) {
	s.t.Helper()
	m, before := s.result()
	if m.Result == nil {
		s.t.Fatalf("%s: error: %s", s.req.label(), m.Error)
	}
	return decodeTool(s.t, m), before
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
