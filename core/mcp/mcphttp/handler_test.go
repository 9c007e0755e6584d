package mcphttp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/mcphttp"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// modernRequest is mcptest's 2026-07-28 request of method with params (an
// object body without braces, may be empty) to url, declaring caps.
func modernRequest(url, method, params, caps string) *http.Request {
	c := mcptest.New(url, mcptest.Version20260728)
	c.Capabilities = caps
	return c.NewRequest(context.Background(), method, "{"+params+"}").Request
}

// do sends req and reads its answer: the status, and the JSON-RPC message
// of a JSON or SSE body.
func do(t *testing.T, req *http.Request) *mcptest.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcptest.ReadAnswer(resp.StatusCode, resp.Header, raw)
	if err != nil || res.Error == nil && res.Result == nil {
		t.Fatalf("status %d, body %q is not JSON-RPC: %v", resp.StatusCode, raw, err)
	}
	return res
}

var echoSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)

// newServer serves an mcp.Server with an echo tool (which answers the
// caller's principal too) through NewHandler.
func newServer(t *testing.T, opts mcphttp.Options, mopts *mcp.Options) (*httptest.Server, *mcp.Server) {
	t.Helper()
	srv := mcp.NewServer(mcp.Implementation{Name: "mcphttp-test", Version: "1"}, mopts)
	err := srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: echoSchema, Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
		var text string
		_ = json.Unmarshal(c.Arguments()["text"], &text)
		return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: text + " from " + c.Principal()}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcphttp.NewHandler(srv, opts))
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return hs, srv
}

func TestStatelessToolCall(t *testing.T) {
	hs, _ := newServer(t, mcphttp.Options{}, nil)
	res := do(t, modernRequest(hs.URL, "tools/call", `"name":"echo","arguments":{"text":"hi"}`, `{}`))
	if res.Status != http.StatusOK || res.Error != nil || !strings.Contains(string(res.Result), `"text":"hi from "`) {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	if !strings.Contains(string(res.Result), `"name":"mcphttp-test"`) {
		t.Fatalf("serverInfo is not the embedder's: %s", res.Result)
	}
}

// The 2025-11-25 era: initialize gives a session the next request carries.
func TestSessionEra(t *testing.T) {
	hs, _ := newServer(t, mcphttp.Options{}, nil)
	c := mcptest.New(hs.URL, mcptest.Version20251125)
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(context.Background(), "tools/list", "")
	if err != nil || res.Status != http.StatusOK || !bytes.Contains(res.Body, []byte(`"name":"echo"`)) {
		t.Fatalf("tools/list in the session: %v %d %s", err, res.Status, res.Body)
	}
}

// The session's standalone GET stream opens through the handler (headers
// flushed before any event), ends when the server closes, and DELETE ends
// the session.
func TestSessionStreamAndDelete(t *testing.T) {
	hs, srv := newServer(t, mcphttp.Options{}, nil)
	ctx := context.Background()
	c := mcptest.New(hs.URL, mcptest.Version20251125)
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	get, err := c.Get(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer get.Close()
	if get.Response.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", get.Response.StatusCode)
	}
	srv.Close() // ends the stream
	if _, err := io.Copy(io.Discard, get.Response.Body); err != nil {
		t.Fatalf("the GET stream did not end cleanly: %v", err)
	}
	del, err := c.Delete(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if del.Status != http.StatusOK {
		t.Fatalf("DELETE: %d", del.Status)
	}
}

// A request from another site (DNS rebinding) or for another host is
// refused with 403 and a JSON-RPC error body.
func TestHostAndOrigin(t *testing.T) {
	hs, _ := newServer(t, mcphttp.Options{}, nil)
	for _, tc := range []struct {
		name, host, origin string
		status             int
		why                string
	}{
		{"evil origin", "", "evil.example", http.StatusForbidden, "Origin is not allowed"},
		{"evil http origin", "", "http://evil.example", http.StatusForbidden, "Origin is not a localhost origin"},
		{"foreign host", "evil.example", "", http.StatusForbidden, "Host is not a localhost name"},
		// "localhost." was served while the fasthttp front refused it.
		{"trailing-dot host", "localhost.:8080", "http://localhost.:8080", http.StatusForbidden, "Host is not a localhost name"},
		{"localhost origin", "", "http://localhost:3000", http.StatusOK, ""},
		{"no origin", "", "", http.StatusOK, ""},
	} {
		req := modernRequest(hs.URL, "tools/list", "", `{}`)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		res := do(t, req)
		if res.Status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, res.Status, tc.status)
		}
		if e := res.RPCError(); tc.status == http.StatusForbidden && (e == nil || e.Code != mcp.CodeTransport ||
			e.Message != "Forbidden: "+tc.why) {
			t.Errorf("%s: error %+v, want a JSON-RPC Forbidden error", tc.name, e)
		}
	}
	// A listed host and origin pass.
	hs2, _ := newServer(t, mcphttp.Options{AllowedHosts: []string{"mcp.example"}, AllowedOrigins: []string{"https://app.example"}}, nil)
	req := modernRequest(hs2.URL, "tools/list", "", `{}`)
	req.Host = "mcp.example"
	req.Header.Set("Origin", "https://app.example")
	if res := do(t, req); res.Status != http.StatusOK {
		t.Fatalf("allowed host and origin: %d %s", res.Status, res.Body)
	}
}

func TestAuthenticate(t *testing.T) {
	hs, _ := newServer(t, mcphttp.Options{Authenticate: func(r *http.Request) (string, []string, error) {
		if r.Header.Get("Authorization") != "Bearer good" {
			return "", nil, errors.New("bad token")
		}
		return "alice", []string{"read"}, nil
	}}, nil)
	req := modernRequest(hs.URL, "tools/call", `"name":"echo","arguments":{"text":"hi"}`, `{}`)
	if res := do(t, req); res.Status != http.StatusUnauthorized || res.Error == nil {
		t.Fatalf("no credential: %d %s", res.Status, res.Body)
	}
	req = modernRequest(hs.URL, "tools/call", `"name":"echo","arguments":{"text":"hi"}`, `{}`)
	req.Header.Set("Authorization", "Bearer good")
	if res := do(t, req); res.Status != http.StatusOK || !strings.Contains(string(res.Result), "hi from alice") {
		t.Fatalf("with a credential: %d %s", res.Status, res.Body)
	}
}

// A declared body over MaxRequestBytes gets 413 before it is read; a body
// of unknown length is cut there (413); a message over the server's
// MaxBodyBytes gets the server's 413.
func TestBodyLimits(t *testing.T) {
	hs, _ := newServer(t, mcphttp.Options{MaxRequestBytes: 64 << 10}, &mcp.Options{MaxBodyBytes: 16 << 10})
	big := `"name":"echo","arguments":{"text":"` + strings.Repeat("x", 100<<10) + `"}`
	req := modernRequest(hs.URL, "tools/call", big, `{}`)
	if res := do(t, req); res.Status != http.StatusRequestEntityTooLarge || res.Error == nil {
		t.Fatalf("declared length: %d %s", res.Status, res.Body)
	}
	req = modernRequest(hs.URL, "tools/call", big, `{}`)
	req.Body, req.ContentLength = io.NopCloser(struct{ io.Reader }{req.Body}), -1 // chunked
	if res := do(t, req); res.Status != http.StatusRequestEntityTooLarge || res.Error == nil {
		t.Fatalf("unknown length: %d %s", res.Status, res.Body)
	}
	mid := `"name":"echo","arguments":{"text":"` + strings.Repeat("x", 20<<10) + `"}`
	if res := do(t, modernRequest(hs.URL, "tools/call", mid, `{}`)); res.Status != http.StatusRequestEntityTooLarge || res.Error == nil {
		t.Fatalf("over MaxBodyBytes: %d %s", res.Status, res.Body)
	}
}

// A body that stalls after its first bytes is cut off with 408.
func TestSlowBodyCut(t *testing.T) {
	hs, _ := newServer(t, mcphttp.Options{BodyMinRate: 1 << 20, BodyGrace: 100 * time.Millisecond,
		BodyReadTimeout: 200 * time.Millisecond}, nil)
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // a guard, not a measurement
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":\"2.0\",")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !bytes.Contains(raw, []byte("Request Timeout")) {
		t.Fatalf("stalled body: %d %s", resp.StatusCode, raw)
	}
}

// A streaming tool's events reach the client as they are sent: the tool
// waits for the client to have read its first log event before it ends.
func TestSSEFlushed(t *testing.T) {
	seen := make(chan struct{})
	srv := mcp.NewServer(mcp.Implementation{Name: "sse-test"}, nil)
	err := srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`), Streams: mcp.StreamAlways,
		Handler: func(c *mcp.Call) (*mcp.ToolResult, error) {
			c.Log("info", "slow", "started")
			select {
			case <-seen:
			case <-time.After(time.Minute):
				return mcp.ToolError("the first event never reached the client"), nil
			}
			return &mcp.ToolResult{Content: []mcp.Content{mcp.Text{Text: "done"}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()
	c := mcptest.New(hs.URL, mcptest.Version20260728)
	req := c.NewRequest(context.Background(), "tools/call",
		`{"_meta":{"io.modelcontextprotocol/logLevel":"debug"},"name":"slow","arguments":{}}`)
	req.Header.Set("Accept", "text/event-stream, application/json")
	s, err := c.Events(req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var once sync.Once
	var events []mcptest.Message
	for {
		m, err := s.Next()
		if err != nil {
			break
		}
		events = append(events, m)
		once.Do(func() { close(seen) })
	}
	if len(events) != 2 || events[0].Method != "notifications/message" || !strings.Contains(string(events[1].Result), `"text":"done"`) {
		t.Fatalf("events %+v", events)
	}
}

// readFromRecorder is a ResponseWriter that records what its ReadFrom is
// handed (the sendfile path) before passing it on.
type readFromRecorder struct {
	http.ResponseWriter
	mu  sync.Mutex
	src []io.Reader
}

func (r *readFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	r.mu.Lock()
	r.src = append(r.src, src)
	r.mu.Unlock()
	return r.ResponseWriter.(io.ReaderFrom).ReadFrom(src)
}

func (r *readFromRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// A resources/stream body that is a file reaches the ResponseWriter's
// ReadFrom as an *io.LimitedReader over the *os.File itself, where net/http
// uses sendfile; the bytes and MCP-Resource-Uri arrive.
func TestStreamFileReachesReadFrom(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "stream-test"}, nil)
	srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "file:///{name}", Name: "file", Streamable: true}, mcp.ResourceHandler{
		Read: func(*mcp.Call, string) (*mcp.Contents, error) { return nil, mcp.ErrNoResource },
		Stream: func(c *mcp.Call, uri string, maxSize int64) (*resstream.Answer, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			return &resstream.Answer{URI: uri, MIMEType: "application/octet-stream", Size: int64(len(data)), Body: f}, nil
		}})
	rec := &readFromRecorder{}
	h := mcphttp.NewHandler(srv, mcphttp.Options{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.ResponseWriter = w
		h.ServeHTTP(rec, r)
	}))
	defer hs.Close()
	req := modernRequest(hs.URL, "resources/stream", `"uri":"file:///blob"`, `{"resourceStreaming":{}}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("body: %d bytes, err %v (status %d)", len(got), err, resp.StatusCode)
	}
	if u := resp.Header.Get("MCP-Resource-Uri"); u != "file:///blob" {
		t.Fatalf("MCP-Resource-Uri %q", u)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.src) == 0 {
		t.Fatal("the file never reached ReadFrom")
	}
	for _, src := range rec.src {
		lr, ok := src.(*io.LimitedReader)
		if _, isFile := lr.R.(*os.File); !ok || !isFile {
			t.Fatalf("ReadFrom got %T, want an *io.LimitedReader over the *os.File", src)
		}
	}
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }
func (endless) Close() error               { return nil }

// A custom Stream handler that sends an endless body of unknown size to a
// client allowing 10 bytes: the client gets a broken response, not a
// body that looks complete, and never more than 10 bytes.
func TestStreamUnknownSizeCutOverHTTP(t *testing.T) {
	srv := mcp.NewServer(mcp.Implementation{Name: "stream-test"}, nil)
	srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "big:///{name}", Name: "big", Streamable: true}, mcp.ResourceHandler{
		Read: func(*mcp.Call, string) (*mcp.Contents, error) { return nil, mcp.ErrNoResource },
		Stream: func(c *mcp.Call, uri string, maxSize int64) (*resstream.Answer, error) {
			return &resstream.Answer{MIMEType: "application/octet-stream", Size: -1, Body: endless{}}, nil
		}})
	hs := httptest.NewServer(mcphttp.NewHandler(srv, mcphttp.Options{}))
	defer hs.Close()
	req := modernRequest(hs.URL, "resources/stream", `"uri":"big:///x"`, `{"resourceStreaming":{"maxStreamSize":10}}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err == nil || len(got) > 10 {
		t.Fatalf("read %d bytes, err %v: want a broken body of at most 10 bytes", len(got), err)
	}
}
