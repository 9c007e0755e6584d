package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// elicitParams is the part of elicitation/create params the tests use.
type elicitParams struct {
	Mode            string
	Message         string
	URL             string
	ElicitationID   string `json:"elicitationId"`
	RequestedSchema struct {
		Properties map[string]map[string]any
	} `json:"requestedSchema"`
	UploadEndpoints map[string]struct {
		URL, Method string
		UploadID    string `json:"uploadId"`
	} `json:"uploadEndpoints"`
	Meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// startElicitation calls request_upload and returns the SSE stream and the
// elicitation/create request.
func startElicitation(t *testing.T, c *mcpClient, args string) (*sseStream, rpcMsg, elicitParams) {
	t.Helper()
	events := c.events(c.request("tools/call", `{"name":"request_upload","arguments":{`+args+`}}`))
	req, ok := events.next()
	if !ok || req.Method != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %+v", req)
	}
	var p elicitParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	return events, req, p
}

// answer posts the client's answer to the server's request id.
func answer(t *testing.T, c *mcpClient, id json.RawMessage, result string) {
	t.Helper()
	if r := c.reply(id, result); r.status != http.StatusAccepted {
		t.Fatalf("posting the answer: %d %s", r.status, r.body)
	}
}

// TestRequestUploadLegacyBinary and TestRequestUploadLegacyURL: the
// 2025-11-25 binary and URL modes, through the upload endpoints (/u) and
// the upload page; form mode is tested in core/blobs.
func TestRequestUploadLegacyBinary(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{"elicitation":{"form":{},"binary":{"maxFileSize":104857600}}}`)
	events, req, p := startElicitation(t, c, `"accept":["text/*"],"maxSize":8388608`)
	ep, ok := p.UploadEndpoints["file"]
	if p.Mode != "binary" || !ok || ep.Method != "POST" || p.RequestedSchema.Properties["file"]["type"] != "file" || len(p.Meta.ProgressToken) == 0 ||
		p.RequestedSchema.Properties["file"]["maxSize"] != float64(8388608) {
		t.Fatalf("elicitation params %s", req.Params)
	}
	// The client may report its own upload progress (SEP-1306).
	if r := c.notify("notifications/progress", `{"progressToken":`+string(p.Meta.ProgressToken)+`,"progress":0,"total":3145728,"message":"starting"}`); r.status != http.StatusAccepted {
		t.Fatalf("client progress: %d", r.status)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: progress events
	ct, body := multipartBody(t, [3]string{"digits.txt", "text/plain", string(data)})
	if r := doUpload(t, ep.Method, ep.URL, ct, body, nil); r.Status != 201 {
		t.Fatalf("upload: %+v", r)
	}
	answer(t, c, req.ID, `{"action":"accept","content":{"file":{"name":"digits.txt","size":`+itoa(len(data))+`,"mimeType":"text/plain","uploadId":"`+ep.UploadID+`"}}}`)
	res, notes := events.toolResult()
	if res.IsError || res.StructuredContent.SHA256 != hexSum(data) || res.StructuredContent.Key != "uploads/"+ep.UploadID+"/digits.txt" {
		t.Fatalf("result %+v", res)
	}
	progress := 0
	for _, n := range notes {
		if n.Method == "notifications/progress" && strings.Contains(string(n.Params), string(p.Meta.ProgressToken)) {
			progress++
		}
	}
	if progress < 2 {
		t.Fatalf("want server-side progress while bytes arrived, got %v", notes)
	}

	// A lying accept result (wrong size) is refused after checking storage.
	// Without maxSize the field asks for the client's maxFileSize.
	events, req, p = startElicitation(t, c, ``)
	if p.RequestedSchema.Properties["file"]["maxSize"] != float64(104857600) {
		t.Fatalf("maxSize %v, want the client's maxFileSize", p.RequestedSchema.Properties["file"]["maxSize"])
	}
	ep = p.UploadEndpoints["file"]
	ct, body = multipartBody(t, [3]string{"a.txt", "text/plain", "abc"})
	if r := doUpload(t, "POST", ep.URL, ct, body, nil); r.Status != 201 {
		t.Fatalf("upload: %+v", r)
	}
	answer(t, c, req.ID, `{"action":"accept","content":{"file":{"name":"a.txt","size":4,"mimeType":"text/plain","uploadId":"`+ep.UploadID+`"}}}`)
	if res, _ := events.toolResult(); !res.IsError || res.Content[0].Text != `Field "file": the answer says 4 bytes but 3 bytes were uploaded` {
		t.Fatalf("lying answer: %+v", res)
	}

	// Decline.
	events, req, _ = startElicitation(t, c, ``)
	answer(t, c, req.ID, `{"action":"decline"}`)
	if res, _ := events.toolResult(); !res.IsError || res.Content[0].Text != "The user declined the upload" {
		t.Fatalf("decline: %+v", res)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRequestUploadLegacyURL(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{"elicitation":{"url":{}}}`)
	events, req, p := startElicitation(t, c, ``)
	if p.Mode != "url" || p.ElicitationID == "" || !strings.Contains(p.URL, "/upload/") {
		t.Fatalf("url params %s", req.Params)
	}
	// The page is served for the link.
	resp, err := http.Get(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	answer(t, c, req.ID, `{"action":"accept"}`)
	ct, body := multipartBody(t, [3]string{"page.txt", "text/plain", "from the page"})
	if r := doUpload(t, "POST", strings.Replace(p.URL, "/upload/", "/u/", 1), ct, body, nil); r.Status != 201 {
		t.Fatalf("upload: %+v", r)
	}
	res, notes := events.toolResult()
	if res.IsError || res.StructuredContent.SHA256 != hexSum([]byte("from the page")) {
		t.Fatalf("result %+v", res)
	}
	complete := false
	for _, n := range notes {
		if n.Method == "notifications/elicitation/complete" && strings.Contains(string(n.Params), p.ElicitationID) {
			complete = true
		}
	}
	if !complete {
		t.Fatalf("no notifications/elicitation/complete: %v", notes)
	}
}

func inputRequest(t *testing.T, r toolResult) elicitParams {
	t.Helper()
	if r.ResultType != "input_required" || r.RequestState == "" {
		t.Fatalf("want an InputRequiredResult, got %+v", r)
	}
	var irs map[string]struct {
		Method string
		Params elicitParams
	}
	if err := json.Unmarshal(r.InputRequest, &irs); err != nil || irs["upload"].Method != "elicitation/create" {
		t.Fatalf("inputRequests %s", r.InputRequest)
	}
	return irs["upload"].Params
}

// TestRequestUploadModern: request_upload's binary and URL modes in
// 2026-07-28, whose file arrives on the upload endpoints (/u); form mode,
// where it arrives in the retry, is tested in core/blobs.
func TestRequestUploadModern(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, _ := startTestServer(t, Options{Backend: st})
	// A client per capability set, asking for JSON answers.
	client := func(t *testing.T, caps string) *mcpClient {
		return newMCPClient(t, base, modernVersion, caps).with(map[string]string{"Accept": "application/json"})
	}
	const noArgs = `{"name":"request_upload","arguments":{}}`

	t.Run("binary", func(t *testing.T) {
		c := client(t, `{"elicitation":{"binary":{}}}`)
		first := c.call("tools/call", noArgs)
		p := inputRequest(t, first.tool())
		ep := p.UploadEndpoints["file"]
		if p.Mode != "binary" || ep.URL == "" {
			t.Fatalf("params %+v", p)
		}
		ct, body := multipartBody(t, [3]string{"m.bin", "application/octet-stream", "modern bytes"})
		if u := doUpload(t, "POST", ep.URL, ct, body, nil); u.Status != 201 {
			t.Fatalf("upload %+v", u)
		}
		r := c.retry(first, `{"upload":{"action":"accept","content":{"file":{"name":"m.bin","size":12,"mimeType":"application/octet-stream","uploadId":"`+ep.UploadID+`"}}}}`)
		if res := r.tool(); r.status != 200 || res.IsError || res.ResultType != "complete" || res.StructuredContent.SHA256 != hexSum([]byte("modern bytes")) {
			t.Fatalf("result %d %+v", r.status, res)
		}
	})
	t.Run("url", func(t *testing.T) {
		c := client(t, `{"elicitation":{"url":{}}}`)
		first := c.call("tools/call", noArgs)
		p := inputRequest(t, first.tool())
		if p.Mode != "url" || p.ElicitationID != "" {
			t.Fatalf("params %+v", p)
		}
		const accept = `{"upload":{"action":"accept"}}`
		// Retried before the upload: asked again, same upload.
		again := c.retry(first, accept)
		if p2 := inputRequest(t, again.tool()); again.status != 200 || p2.Mode != "url" {
			t.Fatalf("again %d %+v", again.status, p2)
		}
		ct, body := multipartBody(t, [3]string{"u.txt", "text/plain", "url mode"})
		if u := doUpload(t, "POST", strings.Replace(p.URL, "/upload/", "/u/", 1), ct, body, nil); u.Status != 201 {
			t.Fatalf("upload %+v", u)
		}
		r := c.retry(first, accept)
		if res := r.tool(); r.status != 200 || res.IsError || res.StructuredContent.SHA256 != hexSum([]byte("url mode")) {
			t.Fatalf("result %d %+v", r.status, res)
		}
	})
}

// TestRequestUploadURLWaitIsPending: an accepted URL-mode elicitation
// still holds its unit of the pending budget while the upload is awaited,
// so with a budget of one, of two such calls exactly one is refused with
// -32029 (71946bf held both, and any number more, until WaitTimeout). Once
// the upload arrives the unit is back.
func TestRequestUploadURLWaitIsPending(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st, MCP: mcp.Options{Limits: limits.Limits{PendingPerPrincipal: 1}}},
		legacyVersion, `{"elicitation":{"url":{}}}`)
	first, req, p := startElicitation(t, c, ``)
	answer(t, c, req.ID, `{"action":"accept"}`)
	second := c.events(c.request("tools/call", `{"name":"request_upload","arguments":{}}`))
	m, ok := second.next()
	refused := func(m rpcMsg) bool {
		return m.Method == "" && strings.Contains(string(m.Error), `"code":-32029`) && strings.Contains(string(m.Error), `"limit":"pending"`)
	}
	if ok && !refused(m) {
		// The second call asked before the first one waited: then the
		// first one is refused.
		if m.Method != "elicitation/create" {
			t.Fatalf("second call: %+v", m)
		}
		if res, _, _ := nextWithin(first, 15*time.Second); !refused(res) {
			t.Fatalf("both URL-mode waits were held with a budget of one: the first call answered %+v", res)
		}
		return
	}
	if !ok {
		t.Fatal("the second call's stream ended without a message")
	}
	ct, body := multipartBody(t, [3]string{"page.txt", "text/plain", "from the page"})
	if r := doUpload(t, "POST", strings.Replace(p.URL, "/upload/", "/u/", 1), ct, body, nil); r.Status != 201 {
		t.Fatalf("upload: %+v", r)
	}
	if res, _ := first.toolResult(); res.IsError {
		t.Fatalf("the first upload: %+v", res)
	}
	startElicitation(t, c, ``) // the unit came back
}
