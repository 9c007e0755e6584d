package server

// Regression tests for three reported bugs, written against the HTTP surface
// only (the package's mcpClient on /mcp, startTestServer and the test
// backends), so that they keep meaning the same thing however core/mcp is
// structured.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/mcpblob/mcpblob/core/conformance"
	"github.com/mcpblob/mcpblob/storage"
)

// TestRegressCompletionPaging: completion/complete on the blob template
// returns at most 100 values, and when more keys match it says so: hasMore
// true and total either absent or the real count (at least the number of
// matches), never the number of values sent.
func TestRegressCompletionPaging(t *testing.T) {
	parallel(t)
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

	type completion struct {
		Values  []string `json:"values"`
		Total   *int     `json:"total"`
		HasMore *bool    `json:"hasMore"`
	}
	check := func(t *testing.T, mc *mcpClient) {
		for _, tc := range []struct {
			prefix string
			keys   []string
		}{
			{"regress-many/", many},
			{"regress-few/", few},
		} {
			m := mc.call("completion/complete", `{"ref":{"type":"ref/resource","uri":"blob:///{+key}"},"argument":{"name":"key","value":"`+tc.prefix+`"}}`).msg
			if m.Error != nil || m.Result == nil {
				t.Fatalf("prefix %q: error %s", tc.prefix, m.Error)
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

	for _, era := range []string{legacyVersion, modernVersion} {
		t.Run(era, func(t *testing.T) { check(t, newMCPClient(t, base, era, `{}`)) })
	}
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
	parallel(t)
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
	c := newMCPClient(t, base, modernVersion, `{}`)

	// Open the listen stream on a connection of our own.
	req := c.requestID(`"listen-1"`, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`)
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req.Request)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("listen: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	events := newSSEStream(t, resp.Body, req)
	for {
		m, ok := events.next()
		if !ok {
			t.Fatal("listen stream ended before the acknowledgement")
		}
		if m.Method == "notifications/subscriptions/acknowledged" {
			break
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
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log after the client left:\n%s", logs.String()[mark:])
		}
	})
	eventually(t, 15*time.Second, func() bool {
		if m := c.callTool("test_trigger_tool_change", `{}`).msg; m.Error != nil {
			t.Fatalf("test_trigger_tool_change: %s", m.Error)
		}
		select {
		case <-serverClosed:
			return true
		default:
			return false
		}
	})

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
	parallel(t)
	st := newLocalStore(t)
	base, _ := startTestServer(t, Options{Backend: st})
	c := newMCPClient(t, base, modernVersion, `{"elicitation":{"form":{}}}`)
	file := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello"))
	answer := `"inputResponses":{"upload":{"action":"accept","content":{"file":"` + file + `"}}}`

	call := func(key, extra string) *mcpResponse {
		t.Helper()
		return c.with(map[string]string{"Mcp-Param-Blob-Key": key}).call("tools/call",
			`{"name":"request_upload","arguments":{"key":`+jsonString(key)+`,"mode":"form"}`+extra+`}`)
	}
	mint := func(key string) string {
		t.Helper()
		m := call(key, "").msg
		var r toolResult
		if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "input_required" || r.RequestState == "" {
			t.Fatalf("request_upload %q: want an InputRequiredResult, got %s %s", key, m.Result, m.Error)
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
	state := mint("c.txt")
	if m := call("c.txt", `,"requestState":"`+state+`",`+answer).msg; m.Error != nil || !stored("c.txt") {
		t.Fatalf("control retry: %s %s; stored %v", m.Result, m.Error, stored("c.txt"))
	}

	// The state is minted for key a.txt; the retry says b.txt.
	state = mint("a.txt")
	r := call("b.txt", `,"requestState":"`+state+`",`+answer)
	if r.msg.Error == nil {
		t.Errorf("retry with arguments.key %q and a requestState minted for %q: got result %s, want JSON-RPC error -32602 naming \"key\"", "b.txt", "a.txt", r.msg.Result)
	} else if e := r.rpcError(); e.Code != -32602 || !regexp.MustCompile(`\bkey\b`).MatchString(e.Message) {
		t.Errorf("retry with changed arguments.key: got error %d %q, want -32602 naming \"key\"", e.Code, e.Message)
	}
	for _, k := range []string{"a.txt", "b.txt"} {
		if stored(k) {
			t.Errorf("%s was stored by a retry whose arguments do not match its requestState", k)
		}
	}
}
