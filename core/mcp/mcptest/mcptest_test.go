package mcptest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcphttp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

var eras = []string{mcptest.Version20251125, mcptest.Version20260728}

// testServer has an echo tool, a file tool, a tool that notifies while it
// streams and one that asks for input.
func testServer(t *testing.T) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(mcp.Implementation{Name: "mcptest-test", Version: "1"}, nil)
	tools := []*mcp.Tool{
		{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
				var s string
				_ = json.Unmarshal(c.Arguments()["text"], &s)
				return text(s), nil
			}},
		{Name: "hash", Handler: hashFile, InputSchema: json.RawMessage(`{"type":"object","properties":{
			"file":{"type":"string","x-mcp-file":{"maxSize":134217728}}},"required":["file"]}`)},
		{Name: "chatty", Streams: mcp.StreamAlways, InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
				c.Notify("notifications/message", map[string]any{"level": "info", "data": "working"})
				return text("done"), nil
			}},
		{Name: "greet", Streams: mcp.StreamForInput, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: greet},
		{Name: "survey", Stateful: true, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: survey},
	}
	for _, tool := range tools {
		if err := srv.AddTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

// text is a result of one text block. With hashFile, it is where these
// tests meet the handler API.
func text(s string) *mcp.ToolResult {
	return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: s}}}
}

func hashFile(c *mcp.Call) (*mcp.ToolResult, error) {
	f, err := c.File("file")
	if err != nil {
		return nil, err // a *mcp.FileError: an isError result naming the argument
	}
	defer f.Abort()
	h := sha256.New()
	n, err := io.Copy(h, f.Reader())
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("%d %x", n, h.Sum(nil))), nil
}

func greet(c *mcp.Call) (*mcp.ToolResult, error) {
	ans, err := c.Input(map[string]mcp.InputRequest{"name": mcp.Elicit("Your name?", mcp.Object{
		"type": "object", "properties": mcp.Object{"name": mcp.Object{"type": "string"}}})})
	if err != nil {
		return nil, err
	}
	var r struct {
		Action  string
		Content struct{ Name string }
	}
	if json.Unmarshal(ans["name"].Result, &r) != nil || r.Action != "accept" {
		return mcp.ToolError("no name given"), nil
	}
	return text("hello " + r.Content.Name), nil
}

// survey asks two questions in two rounds (2026-07-28), keeping its
// progress and the first answer in its requestState (a stateful tool
// ignores answers that come without one).
func survey(c *mcp.Call) (*mcp.ToolResult, error) {
	ask := func(key string) map[string]mcp.InputRequest {
		return map[string]mcp.InputRequest{key: mcp.Elicit(key+"?", mcp.Object{"type": "object", "properties": mcp.Object{}})}
	}
	st, err := c.State()
	if err != nil {
		return nil, err
	}
	switch {
	case st == nil:
		c.SetState(json.RawMessage(`"start"`))
		return nil, c.AskAgain(ask("name"))
	case string(st) == `"start"`:
		ans, err := c.Input(ask("name"))
		if err != nil {
			return nil, err
		}
		c.SetState(ans["name"].Result)
		return nil, c.AskAgain(ask("color"))
	}
	ans, err := c.Input(ask("color"))
	if err != nil {
		return nil, err
	}
	return text(string(st) + " " + string(ans["color"].Result)), nil
}

// transports gives a client of version over HTTP (mcphttp) and in memory.
func transports(t *testing.T, srv *mcp.Server) map[string]func(version string) *mcptest.Client {
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	t.Cleanup(hs.Close)
	return map[string]func(string) *mcptest.Client{
		"http":      func(v string) *mcptest.Client { return mcptest.New(hs.URL+"/mcp", v) },
		"in-memory": mcptest.NewInMemory(srv).Client,
	}
}

func connect(t *testing.T, c *mcptest.Client) *mcptest.Client {
	t.Helper()
	c.Capabilities = `{"elicitation":{"form":{}}}`
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func toolText(t *testing.T, res *mcptest.Response, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := res.ToolResult()
	if err != nil {
		t.Fatalf("%v: %d %.300s", err, res.Status, res.Body)
	}
	return tr.Text()
}

func TestCallToolBothEras(t *testing.T) {
	ctx := context.Background()
	for name, client := range transports(t, testServer(t)) {
		for _, v := range eras {
			t.Run(name+"/"+v, func(t *testing.T) {
				c := connect(t, client(v))
				if v == mcptest.Version20251125 && c.Session == "" {
					t.Fatal("no session after Connect")
				}
				if c.Init.Result == nil {
					t.Fatalf("connect answer %.300s", c.Init.Body)
				}
				res, err := c.CallTool(ctx, "echo", `{"text":"héllo"}`)
				if got := toolText(t, res, err); got != "héllo" {
					t.Fatalf("echo: %q", got)
				}
				res, err = c.CallTool(ctx, "no-such-tool", `{}`)
				if err != nil {
					t.Fatal(err)
				}
				if e := res.RPCError(); e == nil && !strings.Contains(string(res.Body), "isError") {
					t.Fatalf("unknown tool: %.300s", res.Body)
				}
			})
		}
	}
}

func TestModernHeaders(t *testing.T) {
	c := mcptest.New("http://example.invalid/mcp", mcptest.Version20260728)
	r := c.NewRequest(context.Background(), "tools/call", `{"name":"naïve","arguments":{}}`)
	for h, want := range map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
		"Mcp-Name": "=?base64?bmHDr3Zl?="} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	body, _ := io.ReadAll(r.Body)
	want := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":` +
		`"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"naïve","arguments":{}}}`
	if string(body) != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
}

func TestSSEAnswer(t *testing.T) {
	ctx := context.Background()
	for name, client := range transports(t, testServer(t)) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, client(mcptest.Version20251125))
			res, err := c.CallTool(ctx, "chatty", `{}`)
			if got := toolText(t, res, err); got != "done" || mcptest.MediaType(res.Header) != "text/event-stream" {
				t.Fatalf("%q over %q", got, res.Header.Get("Content-Type"))
			}
			if len(res.Before) != 1 || res.Before[0].Method != "notifications/message" {
				t.Fatalf("before the answer: %+v", res.Before)
			}
			s, err := c.Events(c.NewRequest(ctx, "tools/call", `{"name":"chatty","arguments":{}}`))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if m, err := s.Next(); err != nil || m.Method != "notifications/message" {
				t.Fatalf("first event %+v %v", m, err)
			}
			if m, before, err := s.Result(); err != nil || m.Result == nil || len(before) != 0 {
				t.Fatalf("result %+v %v %v", m, before, err)
			}
		})
	}
}

func TestGetStreamAndDelete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, client := range transports(t, testServer(t)) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, client(mcptest.Version20251125))
			s, err := c.Get(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if s.Response.StatusCode != http.StatusOK {
				t.Fatalf("GET: %d", s.Response.StatusCode)
			}
			s.Close()
			if res, err := c.Delete(ctx); err != nil || res.Status/100 != 2 {
				t.Fatalf("DELETE: %v %+v", err, res)
			}
			res, err := c.CallTool(ctx, "echo", `{"text":"x"}`)
			if err != nil || res.Status != http.StatusNotFound {
				t.Fatalf("after DELETE: %v %d %.200s", err, res.Status, res.Body)
			}
		})
	}
}

func TestCallToolRounds(t *testing.T) {
	ctx := context.Background()
	for name, client := range transports(t, testServer(t)) {
		for _, v := range eras {
			t.Run(name+"/"+v, func(t *testing.T) {
				c := connect(t, client(v))
				var rounds atomic.Int32
				res, err := c.CallToolRounds(ctx, "greet", `{}`, func(reqs map[string]mcptest.InputRequest) (string, error) {
					rounds.Add(1)
					var out []string
					for key, r := range reqs {
						if r.Method != "elicitation/create" {
							t.Errorf("input request %s: %s", key, r.Method)
						}
						out = append(out, fmt.Sprintf("%q:{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}", key))
					}
					return "{" + strings.Join(out, ",") + "}", nil
				})
				if got := toolText(t, res, err); got != "hello Ada" || rounds.Load() != 1 {
					t.Fatalf("%q after %d rounds", got, rounds.Load())
				}
			})
		}
	}
}

// TestCallToolRoundsState: three rounds, each retry carrying the state the
// round before left (and the first round's params only once).
func TestCallToolRoundsState(t *testing.T) {
	for name, client := range transports(t, testServer(t)) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, client(mcptest.Version20260728))
			var asked []string
			res, err := c.CallToolRounds(context.Background(), "survey", `{}`, func(reqs map[string]mcptest.InputRequest) (string, error) {
				var out []string
				for key := range reqs {
					asked = append(asked, key)
					out = append(out, fmt.Sprintf(`%q:{"action":"accept","content":{"v":%q}}`, key, key+"-answer"))
				}
				return "{" + strings.Join(out, ",") + "}", nil
			})
			got := toolText(t, res, err)
			if !strings.Contains(got, "name-answer") || !strings.Contains(got, "color-answer") || strings.Join(asked, ",") != "name,color" {
				t.Fatalf("%q after asking %v", got, asked)
			}
		})
	}
}

// TestRawAccess: a malformed body and a refused Origin come back as they
// are, status and body, not as errors.
func TestRawAccess(t *testing.T) {
	ctx := context.Background()
	hs := httptest.NewServer(mcphttp.NewHandler(testServer(t), mcphttp.Options{}))
	defer hs.Close()
	c := mcptest.New(hs.URL+"/mcp", mcptest.Version20260728)
	res, err := c.Send(c.NewRaw(ctx, strings.NewReader(`{"jsonrpc":"2.0","id":1,`), -1))
	if err != nil {
		t.Fatal(err)
	}
	if e := res.RPCError(); e == nil || e.Code != -32700 {
		t.Fatalf("malformed body: %d %.300s", res.Status, res.Body)
	}
	res, err = c.With(map[string]string{"Origin": "http://evil.example"}).CallTool(ctx, "echo", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusForbidden {
		t.Fatalf("foreign Origin: %d %.300s", res.Status, res.Body)
	}
}

// pattern yields n deterministic bytes.
type pattern struct{ n, off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		b[i] = byte((p.off + int64(i)) % 251)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// TestFileArgument64MiB sends a 64 MiB file argument (about 85 MiB of
// base64) from a reader: the client never holds it, so the heap stays
// under 24 MiB above where it started, over HTTP and in memory.
func TestFileArgument64MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB through the server")
	}
	const size, bound = 64 << 20, 24 << 20
	h := sha256.New()
	io.Copy(h, &pattern{n: size})
	want := fmt.Sprintf("%d %s", size, hex.EncodeToString(h.Sum(nil)))
	for name, client := range transports(t, testServer(t)) {
		for _, known := range []int64{size, -1} {
			t.Run(fmt.Sprintf("%s/size=%d", name, known), func(t *testing.T) {
				c := client(mcptest.Version20260728)
				base, peak := heapPeak(func() {
					res, err := c.CallToolArgs(context.Background(), "hash", mcptest.FileArg("file",
						mcptest.File{MediaType: "application/octet-stream", Name: "big file.bin", Size: known,
							Body: &pattern{n: size}}))
					if got := toolText(t, res, err); got != want {
						t.Fatalf("hash: %q, want %q", got, want)
					}
				})
				if peak-base > bound {
					t.Fatalf("heap grew %d MiB (from %d to %d MiB), bound %d MiB", (peak-base)>>20, base>>20, peak>>20, bound>>20)
				}
				t.Logf("heap %d → peak %d MiB", base>>20, peak>>20)
			})
		}
	}
}

// heapPeak runs f and samples HeapInuse every 2 ms: the value before f
// (after a GC) and the highest seen while it ran.
func heapPeak(f func()) (base, peak uint64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak = ms.HeapInuse, ms.HeapInuse
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return base, peak
}

// TestSessionlessLegacy: a 2025-11-25 server that assigns no session is
// connected to, and later requests carry the protocol version (and no
// session header).
func TestSessionlessLegacy(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg mcptest.Message
		_ = json.NewDecoder(r.Body).Decode(&msg)
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"tools":[]}}`, msg.ID)
	}))
	defer hs.Close()
	c := mcptest.New(hs.URL, mcptest.Version20251125)
	if err := c.Connect(context.Background()); err != nil || c.Session != "" {
		t.Fatalf("connect: %v, session %q", err, c.Session)
	}
	if _, err := c.Call(context.Background(), "tools/list", ""); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0].Get("MCP-Protocol-Version") != "" {
		t.Fatalf("%d requests; initialize's version header %q", len(seen), seen[0].Get("MCP-Protocol-Version"))
	}
	for i, h := range seen[1:] {
		if h.Get("MCP-Protocol-Version") != mcptest.Version20251125 || h.Get("Mcp-Session-Id") != "" {
			t.Errorf("request %d: version %q, session %q", i+2, h.Get("MCP-Protocol-Version"), h.Get("Mcp-Session-Id"))
		}
	}
}

// A value that only looks encoded must be encoded, or the server decodes it.
func TestHeaderValueEncodesLookalike(t *testing.T) {
	for v, plain := range map[string]bool{"k.txt": true, " k": false, "é": false, "=?base64?aw==?=": false} {
		got := mcptest.HeaderValue(v)
		if (got == v) != plain {
			t.Errorf("HeaderValue(%q) = %q; want plain=%v", v, got, plain)
		}
	}
}
