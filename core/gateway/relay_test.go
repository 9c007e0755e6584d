package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/principal"
	"github.com/mcpblob/mcpblob/core/gateway/wire"
)

// seen is what a test upstream received.
type seen struct {
	mu     sync.Mutex
	header http.Header
	method string
	sum    [32]byte
	n      int64
}

func (s *seen) record(r *http.Request) {
	h := sha256.New()
	n, _ := io.Copy(h, r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header, s.method, s.n = r.Header.Clone(), r.Method, n
	copy(s.sum[:], h.Sum(nil))
}

func (s *seen) get() seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return seen{header: s.header, method: s.method, sum: s.sum, n: s.n}
}

// Answers with odd whitespace, key order and escapes: the gateway must not
// touch them.
const (
	oddJSON = "{ \"result\" : {\"tools\":[ ]} ,\"jsonrpc\":\"2.0\",\t\"id\" : 7 , \"x\":\"\\u00e9\\/\" }\n"
	oddSSE  = "id: 1\nretry: 500\ndata: \n\n: comment\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":7,\"result\":{}}\n\n"
)

func TestPassThroughBytesAndHeaders(t *testing.T) {
	var got seen
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		w.Header().Set("Mcp-Session-Id", "sess-upstream-1")
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "dropped")
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, oddSSE)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, oddJSON)
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL, nil))

	// A large tools/call body, streamed: the upstream gets the same bytes.
	big := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"file":"data:;base64,` +
		strings.Repeat("QUJD", 2<<20) + `"}}}`
	hdr := map[string]string{"Mcp-Session-Id": "sess-upstream-1", "MCP-Protocol-Version": "2025-11-25",
		"Authorization": "Bearer client-secret", "Cookie": "c=1", principal.Header: "v1.forged",
		"Last-Event-ID": "ev-9", "Mcp-Name": "x", "X-Custom": "kept"}
	resp, b := post(t, gw.URL, hdr, big)
	if string(b) != oddJSON {
		t.Fatalf("JSON answer changed:\n got %q\nwant %q", b, oddJSON)
	}
	if resp.Header.Get("Mcp-Session-Id") != "sess-upstream-1" || resp.Header.Get("X-Upstream") != "yes" ||
		resp.Header.Get("X-Upstream-Hop") != "" {
		t.Errorf("answer headers: %v", resp.Header)
	}
	s := got.get()
	if s.sum != sha256.Sum256([]byte(big)) || s.n != int64(len(big)) {
		t.Errorf("upstream got %d bytes, not the client's %d", s.n, len(big))
	}
	for name, want := range map[string]string{"Mcp-Session-Id": "sess-upstream-1", "Mcp-Protocol-Version": "2025-11-25",
		"Last-Event-Id": "ev-9", "Mcp-Name": "x", "X-Custom": "kept", "Authorization": "Bearer upstream-secret",
		"Cookie": "", "Origin": ""} {
		if v := s.header.Get(name); v != want {
			t.Errorf("upstream header %s = %q, want %q", name, v, want)
		}
	}
	who, err := principal.Verify(bytes.Repeat([]byte{1}, 32), s.header.Get(principal.Header), time.Now())
	if err != nil || who != "alice" {
		t.Errorf("principal header: %q, %v (the client's forged one must not pass)", who, err)
	}

	// The GET stream: SSE byte for byte.
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", "ev-3")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if string(b2) != oddSSE || r2.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("SSE answer changed:\n got %q\nwant %q", b2, oddSSE)
	}
	if s := got.get(); s.method != http.MethodGet || s.header.Get("Last-Event-Id") != "ev-3" {
		t.Errorf("GET stream reached the upstream as %s with Last-Event-ID %q", s.method, s.header.Get("Last-Event-Id"))
	}

	// DELETE ends the upstream session.
	req, _ = http.NewRequest(http.MethodDelete, gw.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", "sess-upstream-1")
	r3, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r3.Body.Close()
	if s := got.get(); s.method != http.MethodDelete || s.header.Get("Mcp-Session-Id") != "sess-upstream-1" {
		t.Errorf("DELETE reached the upstream as %s, session %q", s.method, s.header.Get("Mcp-Session-Id"))
	}
}

// TestSSEFlushedPerEvent: each event reaches the client while the upstream
// still holds the stream open.
func TestSSEFlushedPerEvent(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer up.Close()
	defer close(release)
	gw := serveGateway(t, newGateway(t, up.URL, nil))
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
	got := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		line := make([]byte, 16)
		n, _ := io.ReadFull(resp.Body, line)
		got <- string(line[:n])
	}()
	select {
	case line := <-got:
		if line != `data: {"jsonrpc"` {
			t.Fatalf("first event: %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first event was not relayed while the upstream held the stream open")
	}
}

// TestClientGoneCancelsUpstream: a client that closes its connection ends
// the upstream call.
func TestClientGoneCancelsUpstream(t *testing.T) {
	ended := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			select {
			case <-r.Context().Done():
				close(ended)
				return
			case <-time.After(20 * time.Millisecond):
				io.WriteString(w, ": tick\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL, nil))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gw.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(resp.Body, make([]byte, 8))
	cancel()
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call outlived the client")
	}
}

func TestMethodFromBodyAndHeader(t *testing.T) {
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "tools/list"},
		{` { "params" : {"x":[1,{"y":"}"}]}, "id":"a\"b", "method":"resources/read"}`, "resources/read"},
		{`{"params":{"s":"` + strings.Repeat("x", 64<<10) + `"},"method":"tools/call"}`, ""}, // beyond the look
		{`[{"method":"tools/list"}]`, ""},
	} {
		m, _, _ := wire.PeekMessage([]byte(c.body)[:min(len(c.body), DefaultPeekBytes)])
		if m != c.want {
			t.Errorf("wire.PeekMessage(%.40q…) = %q, want %q", c.body, m, c.want)
		}
	}
}

func TestUpstreamFailures(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client leave
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	answer := func(status int, ct, body string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://upstream.internal/x"`)
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	for _, c := range []struct {
		name, url string
		status    int
		kind      string
	}{
		{"unreachable", deadURL, 502, kindUnreachable},
		{"timeout", slow.URL, 504, kindTimeout},
		{"credential", answer(401, "application/json", `{}`), 502, kindCredential},
		{"forbidden", answer(403, "text/plain", `no`), 502, kindCredential},
		{"html", answer(200, "text/html", "<html>"), 502, kindNonMCP},
		{"5xx", answer(503, "text/plain", "down"), 502, kindStatus},
	} {
		t.Run(c.name, func(t *testing.T) {
			gw := serveGateway(t, newGateway(t, c.url, func(o *Options) { o.Timeout = 300 * time.Millisecond }))
			resp, b := post(t, gw.URL, map[string]string{"Mcp-Method": "tools/list"}, `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`)
			code, msg, kind := rpcErr(t, b)
			if resp.StatusCode != c.status || code != -32603 || kind != c.kind || !strings.Contains(string(b), `"id":42`) {
				t.Errorf("got %d %s (code %d, kind %q), want %d kind %q", resp.StatusCode, b, code, kind, c.status, c.kind)
			}
			if resp.Header.Get("WWW-Authenticate") != "" || strings.Contains(msg, "upstream.internal") {
				t.Errorf("the upstream's challenge reached the client: %v", resp.Header)
			}
		})
	}
}

func TestPassesMCPErrorsThrough(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Session not found"}}`)
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL, nil))
	resp, b := post(t, gw.URL, map[string]string{"Mcp-Session-Id": "gone"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != 404 || !strings.Contains(string(b), "Session not found") {
		t.Fatalf("got %d %s, want the upstream's 404 as it is", resp.StatusCode, b)
	}
}

var _ = fmt.Sprint

// TestForgedPrincipalDropped: with no principal header of its own
// (PrincipalOff), the gateway still never passes one a client made up.
func TestForgedPrincipalDropped(t *testing.T) {
	var got seen
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL, func(o *Options) { o.PrincipalKey, o.PrincipalMode = nil, PrincipalOff }))
	post(t, gw.URL, map[string]string{principal.Header: "admin"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if v := got.get().header.Get(principal.Header); v != "" {
		t.Errorf("the upstream got the client's %s: %q", principal.Header, v)
	}
}

// TestSilentUpstreamClientGone: while the upstream is silent between
// events the client gets keep-alive comments, and a client that left is
// found by them: its upstream call ends although the upstream sends
// nothing more.
func TestSilentUpstreamClientGone(t *testing.T) {
	ended := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(ended)
	}))
	defer func() { up.CloseClientConnections(); up.Close() }() // a failed test must not wait for the call
	gw := serveGateway(t, newGateway(t, up.URL, func(o *Options) { o.KeepAlive = 20 * time.Millisecond }))
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	want := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n: keep-alive\n\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != want {
		t.Fatalf("got %q, %v; want the event, then a keep-alive comment", got, err)
	}
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call outlived the client")
	}
}
