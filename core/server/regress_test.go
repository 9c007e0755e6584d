package server

// A regression test for a reported bug, written against the HTTP surface
// only (the package's mcpClient on /mcp, startTestServer and the test
// backends), so that it keeps meaning the same thing however core/mcp is
// structured. The blob tools' regressions (completion paging, the MRTR
// argument binding of request_upload) are tested in core/blobs.

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/conformance"
)

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
