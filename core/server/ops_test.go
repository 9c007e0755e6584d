package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/front"
)

func TestPosture(t *testing.T) {
	parallel(t)
	be := newMemBackend()
	if _, err := New(Options{Backend: be, Front: front.Options{Listen: "0.0.0.0:8080"}}); err == nil {
		t.Fatal("non-loopback bind without keys accepted")
	}
	if _, err := New(Options{Backend: be, Front: front.Options{Listen: ":8080"}}); err == nil {
		t.Fatal("wildcard bind without keys accepted")
	}
	if _, err := New(Options{Backend: be, Auth: Auth{Keys: []string{HashKey("k")}}, Front: front.Options{Listen: "0.0.0.0:8080"}}); err != nil {
		t.Fatalf("non-loopback bind with keys: %v", err)
	}
	for _, l := range []string{"127.0.0.1:0", "localhost:1", "[::1]:2"} {
		if _, err := New(Options{Backend: be, Front: front.Options{Listen: l}}); err != nil {
			t.Fatalf("loopback %s: %v", l, err)
		}
	}
	if _, err := New(Options{Backend: be, Auth: Auth{Keys: []string{"nothex"}}}); err == nil {
		t.Fatal("malformed key digest accepted")
	}
	if _, err := New(Options{}); err == nil {
		t.Fatal("missing backend accepted")
	}
	// Serve checks the listener too.
	s, err := New(Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip("cannot listen on 0.0.0.0")
	}
	defer ln.Close()
	if err := s.Serve(ln); err == nil || !strings.Contains(err.Error(), "API keys") {
		t.Fatalf("Serve on a wildcard listener without keys: %v", err)
	}
}

// Headers over the limit get 431. The server answers before it has read
// them all and closes, so the kernel may reset the connection under the
// answer before the client reads it: every answer that arrives must be
// 431, and one must arrive in five tries.
func TestHeaderLimit(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{})
	req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-Big: " +
		strings.Repeat("a", 20<<10) + "\r\n\r\n{}"
	for try := 0; try < 5; try++ {
		status, err := rawStatus(strings.TrimPrefix(base, "http://"), req)
		switch {
		case err != nil:
			t.Logf("try %d: %v", try, err)
		case status != http.StatusRequestHeaderFieldsTooLarge:
			t.Fatalf("status %d, want 431", status)
		default:
			return
		}
	}
	t.Fatal("no answer in five tries")
}

// rawStatus sends req as it is on a new connection to addr and reads the
// status code of the answer.
func rawStatus(addr, req string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestReadinessDuringShutdown(t *testing.T) {
	parallel(t)
	// The drain delay is the window for the checks below; a second leaves
	// room for a loaded machine.
	base, srv := startTestServer(t, Options{Front: front.Options{ShutdownDelay: time.Second}})
	get := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			return -1
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("/readyz"); c != 200 {
		t.Fatalf("readyz before shutdown: %d", c)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	eventually(t, 5*time.Second, func() bool { return get("/readyz") == http.StatusServiceUnavailable })
	if c := get("/healthz"); c != 200 {
		t.Fatalf("healthz during drain delay: %d", c)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
