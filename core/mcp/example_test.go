package mcp_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcphttp"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// A tool with an x-mcp-file argument: the handler reads the file as a
// stream, decoded while the request arrived and bounded by maxSize, never
// held in memory whatever its size. The server is served on net/http by
// package mcphttp, which checks Host and Origin, bounds and paces bodies.
func ExampleServer_AddTool() {
	srv := mcp.NewServer(mcp.Implementation{Name: "hasher", Version: "1.0.0"}, nil)
	err := srv.AddTool(&mcp.Tool{
		Name:        "hash_file",
		Description: "Return the SHA-256 and size of a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"file":{"type":"string","x-mcp-file":{"maxSize":1073741824,"accept":["text/*","application/pdf"]}}},
			"required":["file"]}`),
		Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
			f, err := c.File("file")
			if err != nil {
				return nil, err // a *mcp.FileError (over maxSize, not accepted, malformed…) is an isError result
			}
			h := sha256.New()
			n, err := io.Copy(h, f.Reader())
			if err != nil {
				return nil, err
			}
			return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: fmt.Sprintf("%d bytes, sha256 %x", n, h.Sum(nil))}}}, nil
		},
	})
	if err != nil {
		panic(err) // a schema the server cannot honour (maxSize above Options.MaxFileBytes…)
	}
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()

	// A 2026-07-28 (stateless) tools/call with a small data URI.
	res := call(hs.URL, "tools/call", "hash_file",
		`"name":"hash_file","arguments":{"file":"data:text/plain;base64,aGVsbG8="}`, `{}`)
	fmt.Println(text(res))
	// Output: 5 bytes, sha256 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
}

// A tool whose arguments are decoded into a struct: they are checked
// against the schema first (a failure is an isError result naming the
// argument), and the *mcp.File field gets the x-mcp-file argument decoded
// while it arrived, never held in memory. Without an InputSchema, the
// schema is derived from the struct.
func ExampleAddTypedTool() {
	type args struct {
		File  *mcp.File `json:"file"`
		Label string    `json:"label"`
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "labeller", Version: "1.0.0"}, nil)
	err := mcp.AddTypedTool(srv, &mcp.Tool{
		Name: "label_file",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"file":{"type":"string","x-mcp-file":{"maxSize":1073741824,"accept":["text/*"]}},
			"label":{"type":"string","minLength":1,"maxLength":64}},
			"required":["file","label"],"additionalProperties":false}`),
	}, func(c *mcp.Call, in args) (*mcp.ToolResult, error) {
		n, err := io.Copy(io.Discard, in.File.Reader())
		if err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: fmt.Sprintf("%s: %d bytes of %s", in.Label, n, in.File.MediaType)}}}, nil
	})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()

	fmt.Println(text(call(hs.URL, "tools/call", "label_file",
		`"name":"label_file","arguments":{"label":"greeting","file":"data:text/plain;charset=utf-8;base64,aGVsbG8="}`, `{}`)))
	fmt.Println(text(call(hs.URL, "tools/call", "label_file",
		`"name":"label_file","arguments":{"label":"","file":"data:text/plain;base64,aGVsbG8="}`, `{}`)))
	fmt.Println(text(call(hs.URL, "tools/call", "label_file",
		`"name":"label_file","arguments":{"label":"pic","file":"data:image/png;base64,AAAA"}`, `{}`)))
	// Output:
	// greeting: 5 bytes of text/plain; charset=utf-8
	// Argument "label" must not be empty
	// Argument "file": media type "image/png" is not accepted (accept: text/*)
}

// A resource whose body is streamed: resources/read sends it base64 in JSON
// with an exact Content-Length and flat memory, resources/stream sends the
// raw bytes (by sendfile when the body is a file). The server holds every
// answer to the client's maxStreamSize and sets MCP-Resource-Uri.
func ExampleServer_AddResourceTemplate() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "report.txt"), []byte("quarterly numbers\n"), 0o600)
	open := func(uri string) (*os.File, int64, error) {
		name, ok := strings.CutPrefix(uri, "files:///")
		if !ok || !filepath.IsLocal(name) {
			return nil, 0, mcp.ErrNoResource
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, 0, mcp.ErrNoResource
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		return f, fi.Size(), nil
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "files", Version: "1.0.0"}, nil)
	srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "files:///{name}", Name: "file", Streamable: true},
		mcp.ResourceHandler{
			Read: func(c *mcp.Call, uri string) (*mcp.Contents, error) {
				f, size, err := open(uri)
				if err != nil {
					return nil, err
				}
				return &mcp.Contents{URI: uri, MIMEType: "text/plain", Body: f, Size: size}, nil
			},
			Stream: func(c *mcp.Call, uri string, maxSize int64) (*resstream.Answer, error) {
				f, size, err := open(uri)
				if err != nil {
					return nil, err
				}
				return &resstream.Answer{URI: uri, MIMEType: "text/plain", Size: size, Body: f}, nil
			},
		})
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()

	resp := post(hs.URL, "resources/stream", "", `"uri":"files:///report.txt"`, `{"resourceStreaming":{"maxStreamSize":1048576}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("%s %q", resp.Header.Get("MCP-Resource-Uri"), body)
	// Output: files:///report.txt "quarterly numbers\n"
}

// Asking the client for input: c.Input sends an elicitation on the call's
// SSE stream in 2025-11-25; in 2026-07-28 (multi round-trip) the first
// round answers with an InputRequiredResult and the handler runs again
// when the client retries with its inputResponses.
func ExampleCall_Input() {
	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := srv.AddTool(&mcp.Tool{
		Name:        "greet",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
			ans, err := c.Input(map[string]mcp.InputRequest{"name": mcp.Elicit("Your name?", mcp.Object{
				"type": "object", "properties": mcp.Object{"name": mcp.Object{"type": "string"}}, "required": []string{"name"}})})
			if err != nil {
				return nil, err // in 2026-07-28: ends this round with the request
			}
			var r struct {
				Action  string
				Content struct{ Name string }
			}
			if json.Unmarshal(ans["name"].Result, &r) != nil || r.Action != "accept" {
				return mcp.ToolError("no name given"), nil
			}
			return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: "hello " + r.Content.Name}}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()

	caps := `{"elicitation":{"form":{}}}`
	first := call(hs.URL, "tools/call", "greet", `"name":"greet","arguments":{}`, caps)
	var round struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	_ = json.Unmarshal(first, &round)
	fmt.Println(round.ResultType, len(round.InputRequests))
	retry := call(hs.URL, "tools/call", "greet",
		`"name":"greet","arguments":{},"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}`, caps)
	fmt.Println(text(retry))
	// Output:
	// input_required 1
	// hello Ada
}

// post sends a 2026-07-28 request: params (members without braces) and
// the _meta every request of that era carries, mirrored in its headers.
func post(url, method, name, params, caps string) *http.Response {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	return resp
}

// call posts a request and returns its JSON-RPC result.
func call(url, method, name, params, caps string) json.RawMessage {
	resp := post(url, method, name, params, caps)
	defer resp.Body.Close()
	var msg struct {
		Result json.RawMessage
		Error  json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.Error != nil {
		panic(fmt.Sprintf("%s: %v %s", method, err, msg.Error))
	}
	return msg.Result
}

// text is the first text content block of a tool result.
func text(result json.RawMessage) string {
	var r struct{ Content []struct{ Text string } }
	_ = json.Unmarshal(result, &r)
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}
