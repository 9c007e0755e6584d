package blobs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/storage"
)

// request_upload's form mode, where the file arrives in the client's answer
// as an x-mcp-file data URI, in both eras. The binary and URL modes, whose
// file arrives on the upload endpoints, are tested in core/server.

// elicitParams is the part of elicitation/create params the tests use.
type elicitParams struct {
	Mode            string
	RequestedSchema struct {
		Properties map[string]map[string]any
	} `json:"requestedSchema"`
}

// startElicitation calls request_upload with args (members of the
// arguments object) and returns the SSE stream and the
// elicitation/create request.
func startElicitation(t *testing.T, c *toolClient, args string) (*mcptest.Stream, mcptest.Message, elicitParams) {
	t.Helper()
	events, err := c.Events(c.NewRequest(t.Context(), "tools/call", `{"name":"request_upload","arguments":{`+args+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { events.Close() })
	req, err := events.Next()
	if err != nil || req.Method != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %+v, %v", req, err)
	}
	var p elicitParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	return events, req, p
}

// answer posts the client's answer to the server's request id.
func answer(t *testing.T, c *toolClient, id json.RawMessage, result string) {
	t.Helper()
	r, err := c.Reply(t.Context(), id, result)
	if err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("posting the answer: %v %+v", err, r)
	}
}

// finalResult reads the stream up to the call's result.
func finalResult(t *testing.T, events *mcptest.Stream) toolResult {
	t.Helper()
	m, _, err := events.Result()
	if err != nil {
		t.Fatal(err)
	}
	return toolOf(t, m)
}

func TestRequestUploadLegacyForm(t *testing.T) {
	t.Parallel()
	s := newToolServer(t, newLocalStore(t), mcp.Options{}, Options{})
	c := s.client(t, legacyVersion, `{"elicitation":{}}`)
	events, req, p := startElicitation(t, c, `"key":"forms/pic.png","accept":["image/png"]`)
	f := p.RequestedSchema.Properties["file"]
	if _, ok := f["x-mcp-file"]; p.Mode != "" && p.Mode != "form" || !ok || f["format"] != "uri" {
		t.Fatalf("form params %s", req.Params)
	}
	// 200 KiB: the data URI is decoded into a spool as the answer arrives.
	img := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1, 2, 3}, 70000)...)
	answer(t, c, req.ID, `{"action":"accept","content":{"file":"data:image/png;base64,`+base64.StdEncoding.EncodeToString(img)+`"}}`)
	res := finalResult(t, events)
	if res.IsError || res.StructuredContent.Key != "forms/pic.png" || res.StructuredContent.SHA256 != hexSum(img) || res.StructuredContent.MimeType != "image/png" {
		t.Fatalf("result %+v", res)
	}
	// A type outside accept is an isError naming the field.
	events, req, _ = startElicitation(t, c, `"accept":["image/png"]`)
	answer(t, c, req.ID, `{"action":"accept","content":{"file":"data:text/plain,hi"}}`)
	if res := finalResult(t, events); !res.IsError || res.Content[0].Text != `Field "file": media type "text/plain" is not accepted (accept: image/png)` {
		t.Fatalf("accept: %+v", res)
	}
	// A file over the field's maxSize is refused while the answer arrives.
	events, req, _ = startElicitation(t, c, `"maxSize":100000`)
	answer(t, c, req.ID, `{"action":"accept","content":{"file":"data:text/plain;base64,`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 200000))+`"}}`)
	if res := finalResult(t, events); !res.IsError || res.Content[0].Text != `Field "file": file is larger than maxSize 100000 bytes` {
		t.Fatalf("maxSize: %+v", res)
	}
	// Cancel.
	events, req, _ = startElicitation(t, c, ``)
	answer(t, c, req.ID, `{"action":"cancel"}`)
	if res := finalResult(t, events); !res.IsError || res.Content[0].Text != "The user cancelled the upload" {
		t.Fatalf("cancel: %+v", res)
	}
}

// inputRequest is the "upload" input request of an InputRequiredResult.
func inputRequest(t *testing.T, r *mcptest.Response) elicitParams {
	t.Helper()
	tr, err := r.ToolResult()
	if err != nil || !tr.InputRequired() || tr.RequestState == "" {
		t.Fatalf("want an InputRequiredResult, got %v %.300s", err, r.Body)
	}
	ir := tr.InputRequests["upload"]
	var p elicitParams
	if ir.Method != "elicitation/create" || json.Unmarshal(ir.Params, &p) != nil {
		t.Fatalf("inputRequests %+v", tr.InputRequests)
	}
	return p
}

func TestRequestUploadModernForm(t *testing.T) {
	t.Parallel()
	s := newToolServer(t, newLocalStore(t), mcp.Options{}, Options{})
	const noArgs = `{"name":"request_upload","arguments":{}}`
	// A client per capability set, asking for JSON answers.
	client := func(t *testing.T, caps string) *toolClient {
		return s.client(t, modernVersion, caps).with(map[string]string{"Accept": "application/json"})
	}
	call := func(c *toolClient, params string) *mcptest.Response {
		t.Helper()
		r, err := c.Call(t.Context(), "tools/call", params)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	retry := func(c *toolClient, prev *mcptest.Response, inputResponses string) (*mcptest.Response, toolResult) {
		t.Helper()
		r, err := c.Retry(t.Context(), prev, inputResponses)
		if err != nil {
			t.Fatal(err)
		}
		return r, toolOf(t, r.Message)
	}
	t.Run("form", func(t *testing.T) {
		c := client(t, `{"elicitation":{"form":{}}}`)
		first := call(c, noArgs)
		p := inputRequest(t, first)
		if p.Mode != "form" || p.RequestedSchema.Properties["file"]["x-mcp-file"] == nil {
			t.Fatalf("params %+v", p)
		}
		payload := bytes.Repeat([]byte("form data "), 20000)
		answer := `{"upload":{"action":"accept","content":{"file":"data:text/plain;base64,` + base64.StdEncoding.EncodeToString(payload) + `"}}}`
		if r, res := retry(c, first, answer); r.Status != 200 || res.IsError || res.StructuredContent.SHA256 != hexSum(payload) {
			t.Fatalf("result %d %+v", r.Status, res)
		}
		// With requestState before inputResponses, the answer is bounded by
		// the field's maxSize while it arrives.
		limited := call(c, `{"name":"request_upload","arguments":{"maxSize":1000}}`)
		inputRequest(t, limited)
		// The retry repeats the arguments the requestState was issued for.
		if r, res := retry(c, limited, answer); r.Status != 200 || !res.IsError || res.Content[0].Text != `Field "file": file is larger than maxSize 1000 bytes` {
			t.Fatalf("maxSize %d %+v", r.Status, res)
		}
		// Decline.
		if r, res := retry(c, call(c, noArgs), `{"upload":{"action":"decline"}}`); r.Status != 200 || !res.IsError || res.Content[0].Text != "The user declined the upload" {
			t.Fatalf("decline %d %+v", r.Status, res)
		}
	})
	t.Run("tampered state", func(t *testing.T) {
		c := client(t, `{"elicitation":{}}`)
		r := call(c, `{"name":"request_upload","arguments":{},"requestState":"x.y","inputResponses":{"upload":{"action":"accept"}}}`)
		if !bytes.Contains(r.Body, []byte("requestState failed verification")) {
			t.Fatalf("%s", r.Body)
		}
	})
}

// TestRequestUploadMRTRArgumentBinding: a 2026-07-28 request_upload retry
// whose arguments differ from those its requestState was minted for is
// refused with -32602 naming the argument, and stores nothing.
func TestRequestUploadMRTRArgumentBinding(t *testing.T) {
	t.Parallel()
	st := newLocalStore(t)
	c := newToolServer(t, st, mcp.Options{}, Options{}).client(t, modernVersion, `{"elicitation":{"form":{}}}`)
	file := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello"))
	answer := `"inputResponses":{"upload":{"action":"accept","content":{"file":"` + file + `"}}}`

	call := func(key, extra string) *mcptest.Response {
		t.Helper()
		return c.with(map[string]string{"Mcp-Param-Blob-Key": key}).callTool("request_upload",
			`{"key":`+jsonString(key)+`,"mode":"form"}`+extra)
	}
	mint := func(key string) string {
		t.Helper()
		r := call(key, "")
		tr, err := r.ToolResult()
		if err != nil || !tr.InputRequired() || tr.RequestState == "" {
			t.Fatalf("request_upload %q: want an InputRequiredResult, got %v %.300s", key, err, r.Body)
		}
		return tr.RequestState
	}
	stored := func(key string) bool {
		t.Helper()
		_, err := st.Stat(t.Context(), key)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("stat %q: %v", key, err)
		}
		return err == nil
	}

	// Control: a retry with the arguments the state was minted for stores
	// the file, so the request shapes below are right.
	state := mint("c.txt")
	if r := call("c.txt", `,"requestState":"`+state+`",`+answer); r.Error != nil || !stored("c.txt") {
		t.Fatalf("control retry: %s %s; stored %v", r.Result, r.Error, stored("c.txt"))
	}

	// The state is minted for key a.txt; the retry says b.txt.
	state = mint("a.txt")
	r := call("b.txt", `,"requestState":"`+state+`",`+answer)
	if e := r.RPCError(); e == nil {
		t.Errorf("retry with arguments.key %q and a requestState minted for %q: got result %s, want JSON-RPC error -32602 naming \"key\"", "b.txt", "a.txt", r.Result)
	} else if e.Code != -32602 || !regexp.MustCompile(`\bkey\b`).MatchString(e.Message) {
		t.Errorf("retry with changed arguments.key: got error %d %q, want -32602 naming \"key\"", e.Code, e.Message)
	}
	for _, k := range []string{"a.txt", "b.txt"} {
		if stored(k) {
			t.Errorf("%s was stored by a retry whose arguments do not match its requestState", k)
		}
	}
}
