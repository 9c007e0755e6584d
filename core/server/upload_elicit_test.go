package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
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

func legacyClient(t *testing.T, opts Options, caps string) *testClient {
	base, _ := startTestServer(t, opts)
	c := &testClient{t: t, base: base, hc: &http.Client{Timeout: 30 * time.Second}}
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`, nil)
	resp.Body.Close()
	c.sid = resp.Header.Get("Mcp-Session-Id")
	if c.sid == "" {
		t.Fatal("no session")
	}
	return c
}

// startElicitation calls request_upload and returns the SSE stream and the
// elicitation/create request.
func startElicitation(t *testing.T, c *testClient, args string) (*sseReader, rpcMsg, elicitParams) {
	t.Helper()
	events := c.stream(c.post(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"request_upload","arguments":{`+args+`}}}`, nil))
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

func answer(t *testing.T, c *testClient, id json.RawMessage, result string) {
	t.Helper()
	if code, body := c.call(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`, nil); code != http.StatusAccepted {
		t.Fatalf("posting the answer: %d %s", code, body)
	}
}

// finalResult reads the SSE stream up to the call's result, collecting the
// notifications before it.
func finalResult(t *testing.T, events *sseReader) (toolResult, []rpcMsg) {
	t.Helper()
	var notes []rpcMsg
	for {
		m, ok := events.next()
		if !ok {
			t.Fatalf("stream ended; notifications %v", notes)
		}
		if m.Method != "" {
			notes = append(notes, m)
			continue
		}
		if m.Result == nil {
			t.Fatalf("error: %s", m.Error)
		}
		var r toolResult
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatal(err)
		}
		return r, notes
	}
}

func TestRequestUploadLegacyBinary(t *testing.T) {
	st := newLocalStore(t)
	c := legacyClient(t, Options{Backend: st}, `{"elicitation":{"form":{},"binary":{"maxFileSize":104857600}}}`)
	events, req, p := startElicitation(t, c, `"accept":["text/*"],"maxSize":8388608`)
	ep, ok := p.UploadEndpoints["file"]
	if p.Mode != "binary" || !ok || ep.Method != "POST" || p.RequestedSchema.Properties["file"]["type"] != "file" || len(p.Meta.ProgressToken) == 0 ||
		p.RequestedSchema.Properties["file"]["maxSize"] != float64(8388608) {
		t.Fatalf("elicitation params %s", req.Params)
	}
	// The client may report its own upload progress (SEP-1306).
	if code, _ := c.call(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+string(p.Meta.ProgressToken)+`,"progress":0,"total":3145728,"message":"starting"}}`, nil); code != http.StatusAccepted {
		t.Fatalf("client progress: %d", code)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: progress events
	ct, body := multipartBody(t, [3]string{"digits.txt", "text/plain", string(data)})
	if r := doUpload(t, ep.Method, ep.URL, ct, body, nil); r.Status != 201 {
		t.Fatalf("upload: %+v", r)
	}
	answer(t, c, req.ID, `{"action":"accept","content":{"file":{"name":"digits.txt","size":`+itoa(len(data))+`,"mimeType":"text/plain","uploadId":"`+ep.UploadID+`"}}}`)
	res, notes := finalResult(t, events)
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
	if res, _ := finalResult(t, events); !res.IsError || res.Content[0].Text != `Field "file": the answer says 4 bytes but 3 bytes were uploaded` {
		t.Fatalf("lying answer: %+v", res)
	}

	// Decline.
	events, req, _ = startElicitation(t, c, ``)
	answer(t, c, req.ID, `{"action":"decline"}`)
	if res, _ := finalResult(t, events); !res.IsError || res.Content[0].Text != "The user declined the upload" {
		t.Fatalf("decline: %+v", res)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRequestUploadLegacyForm(t *testing.T) {
	st := newLocalStore(t)
	c := legacyClient(t, Options{Backend: st}, `{"elicitation":{}}`)
	events, req, p := startElicitation(t, c, `"key":"forms/pic.png","accept":["image/png"]`)
	f := p.RequestedSchema.Properties["file"]
	if _, ok := f["x-mcp-file"]; p.Mode != "" && p.Mode != "form" || !ok || f["format"] != "uri" {
		t.Fatalf("form params %s", req.Params)
	}
	// 200 KiB: the data URI is decoded into a spool as the answer arrives.
	img := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1, 2, 3}, 70000)...)
	answer(t, c, req.ID, `{"action":"accept","content":{"file":"data:image/png;base64,`+base64.StdEncoding.EncodeToString(img)+`"}}`)
	res, _ := finalResult(t, events)
	if res.IsError || res.StructuredContent.Key != "forms/pic.png" || res.StructuredContent.SHA256 != hexSum(img) || res.StructuredContent.MimeType != "image/png" {
		t.Fatalf("result %+v", res)
	}
	// A type outside accept is an isError naming the field.
	events, req, _ = startElicitation(t, c, `"accept":["image/png"]`)
	answer(t, c, req.ID, `{"action":"accept","content":{"file":"data:text/plain,hi"}}`)
	if res, _ := finalResult(t, events); !res.IsError || res.Content[0].Text != `Field "file": media type "text/plain" is not accepted (accept: image/png)` {
		t.Fatalf("accept: %+v", res)
	}
	// A file over the field's maxSize is refused while the answer arrives.
	events, req, _ = startElicitation(t, c, `"maxSize":100000`)
	answer(t, c, req.ID, `{"action":"accept","content":{"file":"data:text/plain;base64,`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 200000))+`"}}`)
	if res, _ := finalResult(t, events); !res.IsError || res.Content[0].Text != `Field "file": file is larger than maxSize 100000 bytes` {
		t.Fatalf("maxSize: %+v", res)
	}
	// Cancel.
	events, req, _ = startElicitation(t, c, ``)
	answer(t, c, req.ID, `{"action":"cancel"}`)
	if res, _ := finalResult(t, events); !res.IsError || res.Content[0].Text != "The user cancelled the upload" {
		t.Fatalf("cancel: %+v", res)
	}
}

func TestRequestUploadLegacyURL(t *testing.T) {
	st := newLocalStore(t)
	c := legacyClient(t, Options{Backend: st}, `{"elicitation":{"url":{}}}`)
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
	res, notes := finalResult(t, events)
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

// modernCall posts a 2026-07-28 tools/call of request_upload.
func modernCall(t *testing.T, c *testClient, caps, extra string) toolResult {
	t.Helper()
	return modernCallArgs(t, c, caps, `{}`, extra)
}

// modernCallArgs is modernCall with arguments.
func modernCallArgs(t *testing.T, c *testClient, caps, args, extra string) toolResult {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `},"name":"request_upload","arguments":` + args + extra + `}}`
	code, out := c.call(body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "request_upload", "Accept": "application/json"})
	if code != 200 {
		t.Fatalf("%d %s", code, out)
	}
	return decodeToolResult(t, out)
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

func TestRequestUploadModern(t *testing.T) {
	st := newLocalStore(t)
	c := newTestClient(t, Options{Backend: st}, false)

	t.Run("binary", func(t *testing.T) {
		caps := `{"elicitation":{"binary":{}}}`
		r := modernCall(t, c, caps, ``)
		p := inputRequest(t, r)
		ep := p.UploadEndpoints["file"]
		if p.Mode != "binary" || ep.URL == "" {
			t.Fatalf("params %+v", p)
		}
		ct, body := multipartBody(t, [3]string{"m.bin", "application/octet-stream", "modern bytes"})
		if u := doUpload(t, "POST", ep.URL, ct, body, nil); u.Status != 201 {
			t.Fatalf("upload %+v", u)
		}
		retry := `,"requestState":"` + r.RequestState + `","inputResponses":{"upload":{"action":"accept","content":{"file":{"name":"m.bin","size":12,"mimeType":"application/octet-stream","uploadId":"` + ep.UploadID + `"}}}}`
		res := modernCall(t, c, caps, retry)
		if res.IsError || res.ResultType != "complete" || res.StructuredContent.SHA256 != hexSum([]byte("modern bytes")) {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("form", func(t *testing.T) {
		caps := `{"elicitation":{"form":{}}}`
		r := modernCall(t, c, caps, ``)
		p := inputRequest(t, r)
		if p.Mode != "form" || p.RequestedSchema.Properties["file"]["x-mcp-file"] == nil {
			t.Fatalf("params %+v", p)
		}
		payload := bytes.Repeat([]byte("form data "), 20000)
		retry := `,"requestState":"` + r.RequestState + `","inputResponses":{"upload":{"action":"accept","content":{"file":"data:text/plain;base64,` + base64.StdEncoding.EncodeToString(payload) + `"}}}`
		res := modernCall(t, c, caps, retry)
		if res.IsError || res.StructuredContent.SHA256 != hexSum(payload) {
			t.Fatalf("result %+v", res)
		}
		// With requestState before inputResponses, the answer is bounded by
		// the field's maxSize while it arrives.
		r = modernCallArgs(t, c, caps, `{"maxSize":1000}`, ``)
		// The retry repeats the arguments the requestState was issued for.
		res = modernCallArgs(t, c, caps, `{"maxSize":1000}`, `,"requestState":"`+r.RequestState+`","inputResponses":{"upload":{"action":"accept","content":{"file":"data:text/plain;base64,`+base64.StdEncoding.EncodeToString(payload)+`"}}}`)
		if !res.IsError || res.Content[0].Text != `Field "file": file is larger than maxSize 1000 bytes` {
			t.Fatalf("maxSize %+v", res)
		}
		// Decline.
		r = modernCall(t, c, caps, ``)
		res = modernCall(t, c, caps, `,"requestState":"`+r.RequestState+`","inputResponses":{"upload":{"action":"decline"}}`)
		if !res.IsError || res.Content[0].Text != "The user declined the upload" {
			t.Fatalf("decline %+v", res)
		}
	})
	t.Run("url", func(t *testing.T) {
		caps := `{"elicitation":{"url":{}}}`
		r := modernCall(t, c, caps, ``)
		p := inputRequest(t, r)
		if p.Mode != "url" || p.ElicitationID != "" {
			t.Fatalf("params %+v", p)
		}
		accept := `,"requestState":"` + r.RequestState + `","inputResponses":{"upload":{"action":"accept"}}`
		// Retried before the upload: asked again, same upload.
		again := modernCall(t, c, caps, accept)
		if p2 := inputRequest(t, again); p2.Mode != "url" {
			t.Fatalf("again %+v", p2)
		}
		ct, body := multipartBody(t, [3]string{"u.txt", "text/plain", "url mode"})
		if u := doUpload(t, "POST", strings.Replace(p.URL, "/upload/", "/u/", 1), ct, body, nil); u.Status != 201 {
			t.Fatalf("upload %+v", u)
		}
		res := modernCall(t, c, caps, accept)
		if res.IsError || res.StructuredContent.SHA256 != hexSum([]byte("url mode")) {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("tampered state", func(t *testing.T) {
		caps := `{"elicitation":{}}`
		body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `},"name":"request_upload","arguments":{},"requestState":"x.y","inputResponses":{"upload":{"action":"accept"}}}}`
		_, out := c.call(body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "request_upload", "Accept": "application/json"})
		if !strings.Contains(out, "requestState failed verification") {
			t.Fatalf("%s", out)
		}
	})
}
