package mcp

// Protocol behaviour through Server.ServeMCP, with tools, resources and
// templates registered through the public API only.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// eras runs f once per protocol era, each in its own parallel subtest.
func eras(t *testing.T, f func(t *testing.T, newClient func(*testing.T, *Server) *testClient)) {
	for _, e := range []struct {
		name string
		new  func(*testing.T, *Server) *testClient
	}{{"2025-11-25", newLegacyClient}, {"2026-07-28", newModernClient}} {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			f(t, e.new)
		})
	}
}

// hashTool hashes its x-mcp-file argument "file", read from File.Reader.
func hashTool(name string, maxSize int64) *Tool {
	return &Tool{
		Name:        name,
		Description: "Return the SHA-256 of a text file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"file":{"type":"string","format":"uri",` +
			`"x-mcp-file":{"maxSize":` + strconv.FormatInt(maxSize, 10) + `,"accept":["text/plain"]}}},"required":["file"]}`),
		Handler: func(c *Call) (*ToolResult, error) {
			f, err := c.File("file")
			if err != nil {
				return nil, err
			}
			h := sha256.New()
			n, err := io.Copy(h, f.Reader())
			if err != nil {
				return nil, err
			}
			sum := hex.EncodeToString(h.Sum(nil))
			return &ToolResult{Content: []Content{Text{Text: sum}}, StructuredContent: Object{"sha256": sum, "size": n}}, nil
		},
	}
}

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed)})
	_, _ = r.Read(b)
	return b
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// streamCall sends a tools/call whose "file" argument is a data URI of
// payload, written through an io.Pipe while the server reads it; args are
// the arguments before it, in order.
func (c *testClient) streamCall(tool, mediaType string, payload []byte) *response {
	c.t.Helper()
	const mark = "\x00FILE\x00"
	msg := c.message("tools/call", `{"name":`+string(jsonString(tool))+`,"arguments":{"file":"`+mark+`"}}`)
	head, tail, _ := strings.Cut(msg, mark)
	pr, pw := io.Pipe()
	go func() {
		_, err := io.WriteString(pw, head+"data:"+mediaType+";base64,")
		if err == nil {
			enc := base64.NewEncoder(base64.StdEncoding, pw)
			for rest := payload; len(rest) > 0 && err == nil; {
				k := min(len(rest), 100<<10)
				_, err = enc.Write(rest[:k])
				rest = rest[k:]
			}
			if err == nil {
				err = enc.Close()
			}
		}
		if err == nil {
			_, err = io.WriteString(pw, tail)
		}
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	return c.post(c.headers("tools/call", tool), pr)
}

// TestToolFileStreamed: a 3 MiB data URI streamed through a pipe reaches
// the handler as a reader of the decoded bytes.
func TestToolFileStreamed(t *testing.T) {
	t.Parallel()
	payload := randomBytes(1, 3<<20)
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
		s.AddTool(hashTool("hash", 4<<20))
		c := newClient(t, s)
		tr := c.streamCall("hash", "text/plain", payload).tool(t)
		var sc struct {
			SHA256 string `json:"sha256"`
			Size   int64  `json:"size"`
		}
		_ = json.Unmarshal(tr.StructuredContent, &sc)
		if tr.IsError || sc.SHA256 != sha256Hex(payload) || sc.Size != int64(len(payload)) || tr.text() != sc.SHA256 {
			t.Fatalf("result %+v, structured %s", tr, tr.StructuredContent)
		}
	})
}

// TestToolFileProblems: maxSize (inline and streamed), accept and a
// missing argument give isError results naming the argument.
func TestToolFileProblems(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
		s.AddTool(hashTool("hash", 4<<20))
		s.AddTool(hashTool("hash_small", 1000))
		c := newClient(t, s)
		tooLarge := func(n int64) string { return fmt.Sprintf(`Argument "file": file is larger than maxSize %d bytes`, n) }
		for _, tc := range []struct {
			name      string
			res       func() *response
			want      string
			wantError bool
		}{
			{"streamed over maxSize", func() *response { return c.streamCall("hash", "text/plain", randomBytes(2, 4<<20+1)) }, tooLarge(4 << 20), true},
			{"inline over maxSize", func() *response {
				return c.callTool("hash_small", `{"file":"data:text/plain;base64,`+base64.StdEncoding.EncodeToString(randomBytes(3, 1001))+`"}`)
			}, tooLarge(1000), true},
			{"spooled over maxSize", func() *response { return c.streamCall("hash_small", "text/plain", randomBytes(4, 100<<10)) }, tooLarge(1000), true},
			{"inline at maxSize", func() *response {
				return c.callTool("hash_small", `{"file":"data:text/plain;base64,`+base64.StdEncoding.EncodeToString(randomBytes(5, 1000))+`"}`)
			}, sha256Hex(randomBytes(5, 1000)), false},
			{"wrong media type", func() *response { return c.streamCall("hash", "image/png", randomBytes(6, 100<<10)) },
				`Argument "file": media type "image/png" is not accepted (accept: text/plain)`, true},
			{"wrong media type inline", func() *response { return c.callTool("hash", `{"file":"data:image/png;base64,AAAA"}`) },
				`Argument "file": media type "image/png" is not accepted (accept: text/plain)`, true},
			{"absent", func() *response { return c.callTool("hash", `{}`) }, `Argument "file" is required`, true},
			{"not a string", func() *response { return c.callTool("hash", `{"file":7}`) }, `Argument "file" must be a string`, true},
			{"not a data URI", func() *response { return c.callTool("hash", `{"file":"https://example.com/x"}`) },
				`Argument "file": scheme "https" is not supported: a data: URI is required`, true},
		} {
			tr := tc.res().tool(t)
			if tr.IsError != tc.wantError || tr.text() != tc.want {
				t.Errorf("%s: isError %v, %q; want %v, %q", tc.name, tr.IsError, tr.text(), tc.wantError, tc.want)
			}
		}
	})
}

// TestToolFileKeyOrder: a file argument that arrives before the tool's
// name (json.Marshal of a map sorts "arguments" first) is spooled without
// its descriptor, so its maxSize and accept must still be checked before
// the handler sees it.
func TestToolFileKeyOrder(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
	s.AddTool(hashTool("hash_small", 1000))
	c := newModernClient(t, s)
	for _, tc := range []struct {
		name, mediaType string
		size            int
		want            string
	}{
		{"over maxSize", "text/plain", 100 << 10, `Argument "file": file is larger than maxSize 1000 bytes`},
		{"wrong media type", "image/png", 100 << 10, `Argument "file": media type "image/png" is not accepted (accept: text/plain)`},
	} {
		uri := "data:" + tc.mediaType + ";base64," + base64.StdEncoding.EncodeToString(randomBytes(7, tc.size))
		res := c.request("tools/call", "hash_small", `{"arguments":{"file":"`+uri+`"},"name":"hash_small"}`)
		if tr := res.tool(t); !tr.IsError || tr.text() != tc.want {
			t.Errorf("%s: isError %v, %q; want %q", tc.name, tr.IsError, tr.text(), tc.want)
		}
	}
}

// recSink is a FileSink's sink that records what it gets.
type recSink struct {
	mu        sync.Mutex
	target    FileTarget
	buf       bytes.Buffer
	committed bool
	aborted   bool // Abort before any commit
}

func (s *recSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *recSink) Abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.committed {
		s.aborted = true
	}
}

// TestToolFileSink: a FileSink receives the bytes as they are decoded; a
// rejected value aborts it, and so does a handler that did not keep it.
func TestToolFileSink(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		var mu sync.Mutex
		var sinks []*recSink
		s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
		s.AddTool(&Tool{
			Name: "store",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"keep":{"type":"boolean"},` +
				`"file":{"type":"string","x-mcp-file":{"maxSize":100000,"accept":["text/*"]}}}}`),
			FileSink: func(ft FileTarget) (Sink, bool, error) {
				if ft.Args["key"] == "" {
					return nil, false, nil // no key yet: let it be spooled
				}
				sk := &recSink{target: ft}
				mu.Lock()
				sinks = append(sinks, sk)
				mu.Unlock()
				return sk, true, nil
			},
			Handler: func(c *Call) (*ToolResult, error) {
				f, err := c.File("file")
				if err != nil {
					return nil, err
				}
				sk, ok := f.Sink().(*recSink)
				if !ok {
					n, _ := io.Copy(io.Discard, f.Reader())
					return &ToolResult{Content: []Content{Text{Text: "spooled " + strconv.FormatInt(n, 10)}}}, nil
				}
				if string(c.Arguments()["keep"]) == "true" {
					sk.mu.Lock()
					sk.committed = true
					sk.mu.Unlock()
				}
				return &ToolResult{Content: []Content{Text{Text: "sink " + strconv.FormatInt(f.Size, 10)}}}, nil
			},
		})
		c := newClient(t, s).as("alice")
		last := func() *recSink {
			mu.Lock()
			defer mu.Unlock()
			if len(sinks) == 0 {
				return nil
			}
			sk := sinks[len(sinks)-1]
			sinks = nil
			return sk
		}
		payload := randomBytes(8, 60000)
		uri := "data:text/plain;charset=UTF-8;base64," + base64.StdEncoding.EncodeToString(payload)

		// Kept: the sink has the bytes and is not aborted.
		tr := c.callTool("store", `{"key":"k1","keep":true,"file":"`+uri+`"}`).tool(t)
		sk := last()
		if tr.IsError || tr.text() != "sink 60000" || sk == nil {
			t.Fatalf("kept: %+v, sink %v", tr, sk != nil)
		}
		if !bytes.Equal(sk.buf.Bytes(), payload) || !sk.committed || sk.aborted {
			t.Fatalf("kept: sink got %d bytes, committed %v, aborted %v", sk.buf.Len(), sk.committed, sk.aborted)
		}
		if ft := sk.target; ft.Argument != "file" || ft.MediaType != "text/plain; charset=utf-8" || ft.Spec.MaxSize != 100000 ||
			ft.Args["key"] != "k1" || ft.Principal != "alice" || ft.Ctx == nil || ft.Ctx.Err() != nil {
			t.Fatalf("FileTarget %+v", ft)
		}

		// Not kept by the handler: the server aborts it.
		tr = c.callTool("store", `{"key":"k2","file":"`+uri+`"}`).tool(t)
		if sk = last(); tr.IsError || sk == nil || !sk.aborted || !bytes.Equal(sk.buf.Bytes(), payload) {
			t.Fatalf("not kept: %+v, sink %+v", tr, sk)
		}

		// Rejected while arriving (over maxSize): aborted, never committed.
		big := "data:text/plain;base64," + base64.StdEncoding.EncodeToString(randomBytes(9, 100001))
		tr = c.callTool("store", `{"key":"k3","keep":true,"file":"`+big+`"}`).tool(t)
		if sk = last(); !tr.IsError || tr.text() != `Argument "file": file is larger than maxSize 100000 bytes` || sk == nil || !sk.aborted || sk.committed {
			t.Fatalf("rejected: %+v, sink %+v", tr, sk)
		}

		// Rejected on its header: no sink is opened.
		tr = c.callTool("store", `{"key":"k4","file":"data:image/png;base64,AAAA"}`).tool(t)
		if sk = last(); !tr.IsError || !strings.Contains(tr.text(), `Argument "file": media type "image/png" is not accepted`) || sk != nil {
			t.Fatalf("wrong type: %+v, sink %v", tr, sk != nil)
		}

		// Declined (no key yet): spooled for the handler.
		tr = c.callTool("store", `{"file":"`+uri+`"}`).tool(t)
		if sk = last(); tr.IsError || tr.text() != "spooled 60000" || sk != nil {
			t.Fatalf("declined: %+v", tr)
		}
	})
}

// trackCloser records that a Contents body was closed.
type trackCloser struct {
	io.Reader
	mu     sync.Mutex
	closed bool
}

func (c *trackCloser) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *trackCloser) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// TestResourceBodyStreamed: a template's resource read as a Body goes out
// with an exact Content-Length, as base64 or as text, and is closed.
func TestResourceBodyStreamed(t *testing.T) {
	t.Parallel()
	data := randomBytes(10, 3*(192<<10)+2) // three and a bit of contents' raw chunks
	text := strings.Repeat("line \"quoted\" ünï\n\t", 40000)
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{})
		var mu sync.Mutex
		var bodies []*trackCloser
		s.AddResourceTemplate(ResourceTemplate{URITemplate: "mem:///{name}", Name: "mem"}, ResourceHandler{
			Read: func(c *Call, uri string) (*Contents, error) {
				name, ok := strings.CutPrefix(uri, "mem:///")
				if !ok {
					return nil, ErrNoResource
				}
				ct := &Contents{URI: uri, MIMEType: "application/octet-stream"}
				switch name {
				case "bin":
					ct.Body, ct.Size = &trackCloser{Reader: bytes.NewReader(data)}, int64(len(data))
				case "text":
					ok, n, err := ScanText(strings.NewReader(text), int64(len(text)))
					if err != nil || !ok {
						return nil, fmt.Errorf("ScanText: %v, %v", ok, err)
					}
					ct.MIMEType, ct.BodyText, ct.TextLen = "text/plain", true, n
					ct.Body, ct.Size = &trackCloser{Reader: strings.NewReader(text)}, int64(len(text))
				default:
					return nil, c.NotFound(uri)
				}
				mu.Lock()
				bodies = append(bodies, ct.Body.(*trackCloser))
				mu.Unlock()
				return ct, nil
			},
		})
		c := newClient(t, s)
		for _, name := range []string{"bin", "text"} {
			uri := "mem:///" + name
			res := c.request("resources/read", uri, `{"uri":"`+uri+`"}`)
			if !res.rec.streamed || res.rec.size != int64(res.rec.body.Len()) || res.rec.header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s: streamed %v, size %d, %d bytes written, type %q", name, res.rec.streamed, res.rec.size, res.rec.body.Len(), res.rec.header.Get("Content-Type"))
			}
			var rr struct {
				Contents []struct {
					URI      string  `json:"uri"`
					MIMEType string  `json:"mimeType"`
					Blob     *string `json:"blob"`
					Text     *string `json:"text"`
				} `json:"contents"`
				ResultType string `json:"resultType"`
			}
			if err := json.Unmarshal(res.Result, &rr); err != nil || len(rr.Contents) != 1 || rr.Contents[0].URI != uri {
				t.Fatalf("%s: %v: %.300s", name, err, res.Result)
			}
			if c.modern != (rr.ResultType == "complete") {
				t.Errorf("%s: resultType %q", name, rr.ResultType)
			}
			ct := rr.Contents[0]
			switch name {
			case "bin":
				if ct.Blob == nil || ct.Text != nil {
					t.Fatalf("bin: not a blob")
				}
				if b, err := base64.StdEncoding.DecodeString(*ct.Blob); err != nil || !bytes.Equal(b, data) {
					t.Fatalf("bin: blob differs: %v", err)
				}
			case "text":
				if ct.Text == nil || *ct.Text != text || ct.MIMEType != "text/plain" {
					t.Fatalf("text: not the text")
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for i, b := range bodies {
			if !b.isClosed() {
				t.Errorf("body %d not closed", i)
			}
		}
		// Other URIs: not found, in the era's way.
		res := c.request("resources/read", "other:///x", `{"uri":"other:///x"}`)
		want := CodeResourceNotFound
		if c.modern {
			want = CodeInvalidParams
		}
		if res.Error == nil || res.Error.Code != want {
			t.Fatalf("unknown resource: %s", res.rec.body.String())
		}
	})
}

// askTool asks the user for a name with c.Input and greets them.
var askTool = &Tool{
	Name:        "greet",
	InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	Handler: func(c *Call) (*ToolResult, error) {
		ans, err := c.Input(map[string]InputRequest{"x": Elicit("Your name?", Object{"type": "object",
			"properties": Object{"name": Object{"type": "string"}}, "required": []string{"name"}})})
		if err != nil {
			return nil, err
		}
		var r struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		if err := json.Unmarshal(ans["x"].Result, &r); err != nil || r.Action != "accept" {
			return ToolError("declined"), nil
		}
		return &ToolResult{Content: []Content{Text{Text: "hello " + r.Content.Name}}}, nil
	},
}

// TestInputRequired: in 2026-07-28 a tool that needs input answers with an
// InputRequiredResult, and the retry that carries inputResponses succeeds.
func TestInputRequired(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{})
	s.AddTool(askTool)
	c := newModernClient(t, s)
	tr := c.callTool("greet", `{}`).tool(t)
	if tr.ResultType != "input_required" || len(tr.InputRequests) != 1 || tr.RequestState != "" {
		t.Fatalf("first round: %+v", tr)
	}
	ir := tr.InputRequests["x"]
	var p struct {
		Message string `json:"message"`
	}
	if ir.Method != "elicitation/create" || json.Unmarshal(ir.Params, &p) != nil || p.Message != "Your name?" {
		t.Fatalf("input request %+v", ir)
	}
	tr = c.callTool("greet", `{}`, `"inputResponses":{"x":{"action":"accept","content":{"name":"bob"}}}`).tool(t)
	if tr.ResultType != "complete" || tr.IsError || tr.text() != "hello bob" {
		t.Fatalf("retry: %+v", tr)
	}
	// An answer to something else asks again.
	if tr = c.callTool("greet", `{}`, `"inputResponses":{"y":{"action":"accept"}}`).tool(t); tr.ResultType != "input_required" {
		t.Fatalf("wrong answer: %+v", tr)
	}
	// A malformed answer is -32602.
	if res := c.callTool("greet", `{}`, `"inputResponses":{"x":5}`); res.Error == nil || res.Error.Code != CodeInvalidParams {
		t.Fatalf("malformed answer: %s", res.rec.body.String())
	}
}

// statefulTool keeps its progress in the requestState across rounds.
var statefulTool = &Tool{
	Name:        "confirm",
	Stateful:    true,
	InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"extra":{"type":"string"}}}`),
	Handler: func(c *Call) (*ToolResult, error) {
		st, err := c.State()
		if err != nil {
			return nil, err
		}
		reqs := map[string]InputRequest{"ok": Elicit("Sure?", Object{"type": "object", "properties": Object{}})}
		if st == nil {
			c.SetState(json.RawMessage(`{"round":1}`))
			return nil, c.AskAgain(reqs)
		}
		if _, err := c.Input(reqs); err != nil {
			return nil, err
		}
		return &ToolResult{Content: []Content{Text{Text: "done " + string(st)}}}, nil
	},
}

// TestRequestStateArguments: a stateful tool's requestState is bound to
// the arguments it was issued for: a retry with different ones is -32602
// naming the argument.
func TestRequestStateArguments(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{})
	s.AddTool(statefulTool)
	c := newModernClient(t, s)
	tr := c.callTool("confirm", `{"n":1}`).tool(t)
	if tr.ResultType != "input_required" || tr.RequestState == "" || tr.InputRequests["ok"].Method != "elicitation/create" {
		t.Fatalf("first round: %+v", tr)
	}
	state := `"requestState":` + string(jsonString(tr.RequestState))
	answer := `"inputResponses":{"ok":{"action":"accept","content":{}}}`
	for _, tc := range []struct{ args, arg string }{
		{`{"n":2}`, "n"},
		{`{"n":1,"extra":"x"}`, "extra"},
		{`{}`, "n"},
	} {
		res := c.callTool("confirm", tc.args, state, answer)
		var data struct {
			Argument string `json:"argument"`
		}
		if res.Error == nil {
			t.Fatalf("args %s: no error: %s", tc.args, res.rec.body.String())
		}
		_ = json.Unmarshal(res.Error.Data, &data)
		if res.Error.Code != CodeInvalidParams || data.Argument != tc.arg || !strings.Contains(res.Error.Message, strconv.Quote(tc.arg)) {
			t.Errorf("args %s: error %+v, want -32602 naming %q", tc.args, res.Error, tc.arg)
		}
	}
	// The same arguments succeed.
	if tr = c.callTool("confirm", `{"n":1}`, state, answer).tool(t); tr.ResultType != "complete" || tr.text() != `done {"round":1}` {
		t.Fatalf("retry: %+v", tr)
	}
	// Answers without their state start over; a forged state is refused.
	if tr = c.callTool("confirm", `{"n":1}`, answer).tool(t); tr.ResultType != "input_required" {
		t.Fatalf("no state: %+v", tr)
	}
	if res := c.callTool("confirm", `{"n":1}`, `"requestState":"forged"`, answer); res.Error == nil || res.Error.Code != CodeInvalidParams {
		t.Fatalf("forged state: %s", res.rec.body.String())
	}
	// Another principal cannot use it.
	other := c.as("mallory")
	if res := other.callTool("confirm", `{"n":1}`, state, answer); res.Error == nil || res.Error.Code != CodeInvalidParams {
		t.Fatalf("other principal: %s", res.rec.body.String())
	}
}

// TestCompletionCapped: a completion of more than 100 values sends the
// first 100 and hasMore, and no total when the handler did not know it.
func TestCompletionCapped(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{})
		all := make([]string, 150)
		for i := range all {
			all[i] = fmt.Sprintf("item-%03d", i)
		}
		s.AddResourceTemplate(ResourceTemplate{URITemplate: "cmp:///{item}", Name: "cmp"}, ResourceHandler{
			Read: func(c *Call, uri string) (*Contents, error) { return nil, ErrNoResource },
			Complete: func(c *Call, arg, value string) (Completion, error) {
				if arg != "item" {
					return Completion{}, errors.New("unexpected argument " + arg)
				}
				return Completion{Values: FilterPrefix(all, value), Total: -1}, nil
			},
		})
		c := newClient(t, s)
		complete := func(value string) map[string]json.RawMessage {
			t.Helper()
			res := c.request("completion/complete", "", `{"ref":{"type":"ref/resource","uri":"cmp:///{item}"},"argument":{"name":"item","value":`+string(jsonString(value))+`}}`)
			var r struct {
				Completion map[string]json.RawMessage `json:"completion"`
			}
			if res.Error != nil || json.Unmarshal(res.Result, &r) != nil {
				t.Fatalf("completion: %s", res.rec.body.String())
			}
			return r.Completion
		}
		got := complete("")
		var values []string
		_ = json.Unmarshal(got["values"], &values)
		if len(values) != 100 || values[0] != "item-000" || values[99] != "item-099" || string(got["hasMore"]) != "true" {
			t.Fatalf("completion: %d values, hasMore %s", len(values), got["hasMore"])
		}
		if total, ok := got["total"]; ok {
			t.Fatalf("total %s sent for an unknown count", total)
		}
		// Few enough: all of them, no more, and their count.
		got = complete("item-14")
		_ = json.Unmarshal(got["values"], &values)
		if len(values) != 10 || string(got["hasMore"]) != "false" || string(got["total"]) != "10" {
			t.Fatalf("short completion: %d values, %s", len(values), dumpRaw(got))
		}
	})
}

func dumpRaw(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// TestToolFileRepeatedParams: params given twice is refused (-32600 naming
// it): which one would a proxy read? A file taken out of the first one is
// released.
func TestToolFileRepeatedParams(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
	s.AddTool(hashTool("hash", 4<<20))
	c := newModernClient(t, s)
	first := c.message("tools/call", `{"name":"hash","arguments":{"file":"data:text/plain;base64,`+
		base64.StdEncoding.EncodeToString(randomBytes(11, 100<<10))+`"}}`)
	second := c.message("tools/call", `{"name":"hash","arguments":{}}`)
	// {"jsonrpc":…,"params":FIRST,"params":SECOND}
	i := strings.Index(second, `"params":`)
	body := strings.TrimSuffix(first, "}") + "," + second[i:]
	rec := c.post(c.headers("tools/call", "hash"), strings.NewReader(body)).rec
	if b := rec.body.String(); rec.status != 400 || !strings.Contains(b, `"code":-32600`) || !strings.Contains(b, `member \"params\" is given more than once`) {
		t.Fatalf("%d %s", rec.status, b)
	}
}

// TestToolFileRepeatedArgument: an argument given twice is refused (-32602
// naming it), even when only the first value was long enough to be taken
// out.
func TestToolFileRepeatedArgument(t *testing.T) {
	t.Parallel()
	s := NewServer(testImpl, &Options{SpoolDir: t.TempDir()})
	s.AddTool(hashTool("hash", 4<<20))
	c := newModernClient(t, s)
	big := "data:text/plain;base64," + base64.StdEncoding.EncodeToString(randomBytes(12, 100<<10))
	rec := c.callTool("hash", `{"file":"`+big+`","file":"data:text/plain,hi"}`).rec
	if b := rec.body.String(); rec.status != 400 || !strings.Contains(b, `"code":-32602`) || !strings.Contains(b, `"path":"/params/arguments/file"`) {
		t.Fatalf("%d %s", rec.status, b)
	}
}

// TestToolStreamsSSE: a tool that streams answers on an SSE stream; its
// notifications come before the result.
func TestToolStreamsSSE(t *testing.T) {
	t.Parallel()
	eras(t, func(t *testing.T, newClient func(*testing.T, *Server) *testClient) {
		s := NewServer(testImpl, &Options{})
		s.AddTool(&Tool{Name: "chatty", Streams: StreamAlways, InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(c *Call) (*ToolResult, error) {
				for i := range 3 {
					c.Notify("notifications/message", Object{"level": "info", "data": i})
				}
				return &ToolResult{Content: []Content{Text{Text: "done"}}}, nil
			}})
		c := newClient(t, s)
		res := c.callTool("chatty", `{}`)
		if ct := res.rec.header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		if len(res.msgs) != 4 || res.rec.flushes < 4 {
			t.Fatalf("%d messages, %d flushes: %s", len(res.msgs), res.rec.flushes, res.rec.body.String())
		}
		for i, m := range res.msgs[:3] {
			if m.Method != "notifications/message" || !strings.Contains(string(m.Params), `"data":`+strconv.Itoa(i)) {
				t.Errorf("event %d: %+v", i, m)
			}
		}
		if tr := res.tool(t); tr.text() != "done" || string(res.ID) != strconv.Itoa(c.nextID) {
			t.Fatalf("result %+v, id %s", tr, res.ID)
		}
	})
}
