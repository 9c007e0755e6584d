package server

// Regression tests for three reported bugs, written against the HTTP surface
// only (raw requests to /mcp, plus the package's startTestServer and
// newMemBackend), so that they keep compiling and meaning the same thing
// while core/mcp is restructured. Helpers defined here carry a "regress"
// prefix to stay clear of the other test files.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpblob/mcpblob/core/conformance"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// regressMeta is a 2026-07-28 params._meta member declaring caps.
func regressMeta(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `,` +
		`"io.modelcontextprotocol/clientInfo":{"name":"regress","version":"1.0.0"}}`
}

// regressModernHeaders are the 2026-07-28 routing headers of one request.
func regressModernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// regressRPC is the part of a JSON-RPC response the tests look at.
type regressRPC struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// regressPost sends one POST /mcp and returns the status, the headers and
// the JSON-RPC response whose id is id, from a JSON or an SSE body.
func regressPost(t *testing.T, hc *http.Client, base string, hdr map[string]string, id, body string) (int, http.Header, regressRPC) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response to %s: %v", body, err)
	}
	var datas []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: "); ok && d != "" {
				datas = append(datas, d)
			}
		}
	} else {
		datas = []string{string(raw)}
	}
	for _, d := range datas {
		var m regressRPC
		if json.Unmarshal([]byte(d), &m) == nil && m.Method == "" && string(m.ID) == id {
			return resp.StatusCode, resp.Header, m
		}
	}
	t.Fatalf("no JSON-RPC response with id %s: %d %s", id, resp.StatusCode, raw)
	return 0, nil, regressRPC{}
}

// regressLegacySession runs initialize and notifications/initialized
// (2025-11-25) and returns the headers later requests carry.
func regressLegacySession(t *testing.T, hc *http.Client, base, caps string) map[string]string {
	t.Helper()
	code, h, m := regressPost(t, hc, base, nil, "1",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"regress","version":"1.0.0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if code != http.StatusOK || m.Error != nil || sid == "" {
		t.Fatalf("initialize: %d, session %q, %+v", code, sid, m)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return hdr
}

// TestRegressCompletionPaging: completion/complete on the blob template
// returns at most 100 values, and when more keys match it says so: hasMore
// true and total either absent or the real count (at least the number of
// matches), never the number of values sent.
func TestRegressCompletionPaging(t *testing.T) {
	be := newMemBackend()
	var many, few []string
	for i := range 150 {
		k := fmt.Sprintf("regress-many/k%03d.txt", i)
		many = append(many, k)
		be.put(k, "text/plain", []byte("x"))
	}
	for i := range 30 {
		k := fmt.Sprintf("regress-few/k%03d.txt", i)
		few = append(few, k)
		be.put(k, "text/plain", []byte("x"))
	}
	slices.Sort(many)
	slices.Sort(few)
	base, _ := startTestServer(t, Options{Backend: be})
	hc := &http.Client{Timeout: 20 * time.Second}

	type completion struct {
		Values  []string `json:"values"`
		Total   *int     `json:"total"`
		HasMore *bool    `json:"hasMore"`
	}
	check := func(t *testing.T, send func(id int, params string) regressRPC) {
		for i, tc := range []struct {
			prefix string
			keys   []string
		}{
			{"regress-many/", many},
			{"regress-few/", few},
		} {
			params := `"ref":{"type":"ref/resource","uri":"blob:///{+key}"},"argument":{"name":"key","value":"` + tc.prefix + `"}`
			m := send(10+i, params)
			if m.Error != nil || m.Result == nil {
				t.Fatalf("prefix %q: error %+v", tc.prefix, m.Error)
			}
			var r struct {
				Completion completion `json:"completion"`
			}
			if err := json.Unmarshal(m.Result, &r); err != nil {
				t.Fatalf("prefix %q: %v: %s", tc.prefix, err, m.Result)
			}
			c := r.Completion
			total := "absent"
			if c.Total != nil {
				total = fmt.Sprint(*c.Total)
			}
			hasMore := "absent"
			if c.HasMore != nil {
				hasMore = fmt.Sprint(*c.HasMore)
			}
			want := tc.keys[:min(len(tc.keys), 100)]
			if !slices.Equal(c.Values, want) {
				t.Errorf("prefix %q (%d matching keys): got %d values %q…, want the first %d keys in key order",
					tc.prefix, len(tc.keys), len(c.Values), c.Values[:min(len(c.Values), 3)], len(want))
			}
			if len(tc.keys) > 100 {
				if c.HasMore == nil || !*c.HasMore {
					t.Errorf("prefix %q (%d matching keys, %d values sent): hasMore = %s, want true", tc.prefix, len(tc.keys), len(c.Values), hasMore)
				}
				if c.Total != nil && *c.Total < len(tc.keys) {
					t.Errorf("prefix %q (%d matching keys, %d values sent): total = %s, want absent or >= %d", tc.prefix, len(tc.keys), len(c.Values), total, len(tc.keys))
				}
			} else {
				if c.HasMore != nil && *c.HasMore {
					t.Errorf("prefix %q (%d matching keys): hasMore = true, want false or absent", tc.prefix, len(tc.keys))
				}
				if c.Total != nil && *c.Total != len(tc.keys) {
					t.Errorf("prefix %q (%d matching keys): total = %s, want %d or absent", tc.prefix, len(tc.keys), total, len(tc.keys))
				}
			}
			t.Logf("prefix %q: %d matching keys -> %d values, hasMore %s, total %s", tc.prefix, len(tc.keys), len(c.Values), hasMore, total)
		}
	}

	t.Run("2025-11-25", func(t *testing.T) {
		hdr := regressLegacySession(t, hc, base, `{}`)
		check(t, func(id int, params string) regressRPC {
			_, _, m := regressPost(t, hc, base, hdr, fmt.Sprint(id),
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"completion/complete","params":{%s}}`, id, params))
			return m
		})
	})
	t.Run("2026-07-28", func(t *testing.T) {
		check(t, func(id int, params string) regressRPC {
			_, _, m := regressPost(t, hc, base, regressModernHeaders("completion/complete", ""), fmt.Sprint(id),
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"completion/complete","params":{%s,%s}}`, id, params, regressMeta(`{}`)))
			return m
		})
	})
}

// regressConnWatch wraps a listener and reports when the server closes each
// accepted connection, keyed by the client's address.
type regressConnWatch struct {
	net.Listener
	mu     sync.Mutex
	closed map[string]chan struct{}
}

func (w *regressConnWatch) Accept() (net.Conn, error) {
	c, err := w.Listener.Accept()
	if err != nil {
		return nil, err
	}
	done := w.closedChan(c.RemoteAddr().String())
	return &regressWatchedConn{Conn: c, done: done}, nil
}

// closedChan returns the channel closed when the server closes the
// connection from the client address addr.
func (w *regressConnWatch) closedChan(addr string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed == nil {
		w.closed = map[string]chan struct{}{}
	}
	ch, ok := w.closed[addr]
	if !ok {
		ch = make(chan struct{})
		w.closed[addr] = ch
	}
	return ch
}

type regressWatchedConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *regressWatchedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}

var regressLevelRE = regexp.MustCompile(`(?:^| )level=(WARN|ERROR)`)

// TestRegressListenCloseLogging: a 2026-07-28 client that closes its
// subscriptions/listen stream is routine; the server may log it at debug,
// never at WARN or ERROR.
func TestRegressListenCloseLogging(t *testing.T) {
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	watch := &regressConnWatch{Listener: ln}
	// The fixtures provide test_trigger_tool_change, which publishes a
	// tools list change over HTTP (no core/mcp API needed).
	base, _ := startTestServerOn(t, Options{Logger: logger, Extend: conformance.Register}, watch)
	addr := strings.TrimPrefix(base, "http://")

	// Open the listen stream on a connection of our own.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + regressMeta(`{}`) + `}}`
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range regressModernHeaders("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("listen: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	events := bufio.NewReader(resp.Body)
	for acked := false; !acked; {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("listen stream ended before the acknowledgement: %v", err)
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			var m regressRPC
			acked = json.Unmarshal([]byte(d), &m) == nil && m.Method == "notifications/subscriptions/acknowledged"
		}
	}
	serverClosed := watch.closedChan(conn.LocalAddr().String())
	// Records from here on are the stream's; the start-up warning about
	// running without API keys (a loopback test server) is before this.
	mark := len(logs.String())

	// The client goes away.
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}

	// Publish changes until the server's writes fail and it lets go of
	// the connection (it notices a gone client only when it writes).
	hc := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(15 * time.Second)
	for id, noticed := 100, false; !noticed; id++ {
		_, _, m := regressPost(t, hc, base, regressModernHeaders("tools/call", "test_trigger_tool_change"), fmt.Sprint(id),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_trigger_tool_change","arguments":{},%s}}`, id, regressMeta(`{}`)))
		if m.Error != nil {
			t.Fatalf("test_trigger_tool_change: %+v", m.Error)
		}
		select {
		case <-serverClosed:
			noticed = true
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the server never closed the listen connection after the client left; log:\n%s", logs.String()[mark:])
		}
	}

	var bad []string
	for line := range strings.SplitSeq(logs.String()[mark:], "\n") {
		if regressLevelRE.MatchString(line) {
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		t.Errorf("a client closing its subscriptions/listen stream was logged at WARN/ERROR (want debug at most):\n%s", strings.Join(bad, "\n"))
	}
}

// TestRegressMRTRArgumentBinding: a 2026-07-28 request_upload retry whose
// arguments differ from those its requestState was minted for is refused
// with -32602 naming the argument, and stores nothing.
func TestRegressMRTRArgumentBinding(t *testing.T) {
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base, _ := startTestServer(t, Options{Backend: st})
	hc := &http.Client{Timeout: 20 * time.Second}
	meta := regressMeta(`{"elicitation":{"form":{}}}`)
	file := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello"))
	answer := `"inputResponses":{"upload":{"action":"accept","content":{"file":"` + file + `"}}}`

	call := func(id int, key, extra string) regressRPC {
		t.Helper()
		h := regressModernHeaders("tools/call", "request_upload")
		h["Mcp-Param-Blob-Key"] = key
		_, _, m := regressPost(t, hc, base, h, fmt.Sprint(id),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"request_upload","arguments":{"key":%q,"mode":"form"}%s,%s}}`, id, key, extra, meta))
		return m
	}
	mint := func(id int, key string) string {
		t.Helper()
		m := call(id, key, "")
		var r struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "input_required" || r.RequestState == "" {
			t.Fatalf("request_upload %q: want an InputRequiredResult, got %s %+v", key, m.Result, m.Error)
		}
		return r.RequestState
	}
	stored := func(key string) bool {
		t.Helper()
		_, err := st.Stat(context.Background(), key)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("stat %q: %v", key, err)
		}
		return err == nil
	}

	// Control: a retry with the arguments the state was minted for stores
	// the file, so the request shapes below are right.
	state := mint(1, "c.txt")
	if m := call(2, "c.txt", `,"requestState":"`+state+`",`+answer); m.Error != nil || !stored("c.txt") {
		t.Fatalf("control retry: %s %+v; stored %v", m.Result, m.Error, stored("c.txt"))
	}

	// The state is minted for key a.txt; the retry says b.txt.
	state = mint(3, "a.txt")
	m := call(4, "b.txt", `,"requestState":"`+state+`",`+answer)
	switch {
	case m.Error == nil:
		t.Errorf("retry with arguments.key %q and a requestState minted for %q: got result %s, want JSON-RPC error -32602 naming \"key\"", "b.txt", "a.txt", m.Result)
	case m.Error.Code != -32602 || !regexp.MustCompile(`\bkey\b`).MatchString(m.Error.Message):
		t.Errorf("retry with changed arguments.key: got error %d %q, want -32602 naming \"key\"", m.Error.Code, m.Error.Message)
	}
	for _, k := range []string{"a.txt", "b.txt"} {
		if stored(k) {
			t.Errorf("%s was stored by a retry whose arguments do not match its requestState", k)
		}
	}
}
