package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// Protocol versions the test client speaks (docs/protocol.md).
const (
	legacyVersion = mcptest.Version20251125 // initialize, Mcp-Session-Id
	modernVersion = mcptest.Version20260728 // stateless, per-request _meta
)

// streamCaps declares resourceStreaming up to 1 GiB.
const streamCaps = `{"resourceStreaming":{"maxStreamSize":1073741824}}`

// mcpClient is the package's MCP test client: core/mcp/mcptest's Client
// bound to a test, so that a failure to talk to the server ends the test.
// Statuses and JSON-RPC errors are for the test to judge. A subtest takes
// its own copy with in; with adds headers. A request is built (request,
// requestID, raw, get) and then sent: send reads the whole answer, open
// leaves a huge body to the caller, events reads an SSE body message by
// message. call, callTool, readResource, streamResource, retry (MRTR),
// notify and reply are the one-line forms. Redirects are not followed.
type mcpClient struct {
	t       testing.TB
	mc      *mcptest.Client
	url     string // the /mcp endpoint
	hc      *http.Client
	version string // legacyVersion or modernVersion
	sid     string // the 2025-11-25 session
	init    rpcMsg // the initialize response (2025-11-25)
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
	mc := mcptest.New(base+"/mcp", version).With(hdr)
	mc.HTTP = &http.Client{Transport: tr, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	mc.Capabilities = caps
	if version == legacyVersion {
		if err := mc.Connect(context.Background()); err != nil || mc.Session == "" {
			t.Fatalf("connect: %v (session %q)", err, mc.Session)
		}
	} else if version != modernVersion {
		t.Fatalf("bug: protocol version %q", version)
	}
	c := &mcpClient{t: t, mc: mc, url: mc.Endpoint, hc: mc.HTTP, version: version, sid: mc.Session}
	if mc.Init != nil {
		c.init = mc.Init.Message
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
	d.mc = c.mc.With(h)
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

func fromMCPTest(r *mcptest.Request) *mcpRequest {
	return &mcpRequest{Request: r.Request, id: r.ID, method: r.RPCMethod, params: r.Params}
}

func (r *mcpRequest) mcptest() *mcptest.Request {
	return &mcptest.Request{Request: r.Request, ID: r.id, RPCMethod: r.method, Params: r.params}
}

func (r *mcpRequest) label() string {
	if r.method != "" {
		return r.method
	}
	return r.URL.Path
}

// request builds the POST of method with params (a JSON object, "" for
// none) and the next numeric id.
func (c *mcpClient) request(method, params string) *mcpRequest {
	return fromMCPTest(c.mc.NewRequest(context.Background(), method, params))
}

// requestID is request with the JSON id given (e.g. `"call-1"` or `7`).
func (c *mcpClient) requestID(id, method, params string) *mcpRequest {
	return fromMCPTest(c.mc.NewRequestID(context.Background(), id, method, params))
}

// raw builds a POST whose body is sent as is (size -1: unknown, chunked),
// with the era's headers but no Mcp-Method or Mcp-Name.
func (c *mcpClient) raw(body io.Reader, size int64) *mcpRequest {
	return fromMCPTest(c.mc.NewRaw(context.Background(), body, size))
}

// get builds the 2025-11-25 GET of the session's SSE stream; a lastEventID
// resumes a stream (SEP-1699).
func (c *mcpClient) get(lastEventID string) *mcpRequest {
	return fromMCPTest(c.mc.NewGet(context.Background(), lastEventID))
}

// meta returns params with, for 2026-07-28, the client's _meta members
// first (for bodies built by hand).
func (c *mcpClient) meta(params string) string { return c.mc.WithMeta(params) }

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
	resp, err := c.mc.Open(r.mcptest())
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// send sends r and reads the whole response. A JSON body is decoded into
// msg, and so is the response event of an SSE body (events reads the
// messages before it); the body of a resources/stream answer (marked by
// MCP-Resource-Uri) is the blob's bytes, whatever their type, and is not.
func (c *mcpClient) send(r *mcpRequest) *mcpResponse {
	c.t.Helper()
	res, err := c.mc.Send(r.mcptest())
	if err != nil {
		c.t.Fatal(err)
	}
	return &mcpResponse{httpResp: httpResp{res.Status, res.Header, res.Body}, msg: res.Message, t: c.t, req: r, res: res}
}

// events sends r, which must be answered with SSE, and returns the stream
// to read message by message (closed when the test ends).
func (c *mcpClient) events(r *mcpRequest) *sseStream {
	c.t.Helper()
	s, err := c.mc.Events(r.mcptest())
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { s.Close() })
	return &sseStream{t: c.t, s: s, req: r}
}

func mediaType(h http.Header) string { return mcptest.MediaType(h) }

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
	res, err := c.mc.Retry(context.Background(), prev.res, inputResponses)
	if err != nil {
		c.t.Fatal(err)
	}
	return &mcpResponse{httpResp: httpResp{res.Status, res.Header, res.Body}, msg: res.Message, t: c.t,
		req: fromMCPTest(res.Req), res: res}
}

// notify sends a notification (the server answers 202).
func (c *mcpClient) notify(method, params string) *mcpResponse {
	c.t.Helper()
	return c.send(fromMCPTest(c.mc.NewNotification(context.Background(), method, params)))
}

// reply answers the server's request id (elicitation/create,
// sampling/createMessage) with result, a JSON object.
func (c *mcpClient) reply(id json.RawMessage, result string) *mcpResponse {
	c.t.Helper()
	return c.send(fromMCPTest(c.mc.NewReply(context.Background(), id, result)))
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
	res *mcptest.Response // nil for a response read by hand
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
type rpcMsg = mcptest.Message

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

// sseStream reads the JSON-RPC messages of an SSE body.
type sseStream struct {
	t   testing.TB
	s   *mcptest.Stream
	req *mcpRequest
}

// newSSEStream reads body, the SSE answer to req read by hand.
func newSSEStream(t testing.TB, body io.Reader, req *mcpRequest) *sseStream {
	return &sseStream{t: t, s: mcptest.NewStream(body, req.mcptest()), req: req}
}

// next returns the next message, skipping events without data (priming);
// false at the end of the stream or when it broke (closed at the test's
// end). Data that is not JSON fails the test.
func (s *sseStream) next() (rpcMsg, bool) {
	s.t.Helper()
	m, err := s.s.Next()
	if errors.Is(err, mcptest.ErrMalformed) {
		s.t.Fatal(err)
	}
	return m, err == nil
}

// result reads up to the response to the stream's request and returns it
// with the messages sent before it (notifications and server requests).
func (s *sseStream) result() (rpcMsg, []rpcMsg) {
	s.t.Helper()
	m, before, err := s.s.Result()
	if err != nil {
		s.t.Fatalf("%v; before it: %v", err, before)
	}
	return m, before
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
