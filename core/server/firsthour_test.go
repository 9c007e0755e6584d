package server

// What a new user meets first over HTTP: the bare address, the request
// after initialize, an upload endpoint's page, and the access log of a
// download cut short.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/front"
)

// TestIndexPointsTheWay: GET / names the MCP endpoint, the control API, the
// health checks and the docs, as JSON.
func TestIndexPointsTheWay(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{})
	r := c.do("GET", "/", nil, nil)
	var idx struct {
		Name      string
		Endpoints map[string]string
		Docs      string
	}
	if err := json.Unmarshal(r.body, &idx); r.status != http.StatusOK || err != nil ||
		r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /: %d %q %s (%v)", r.status, r.header.Get("Content-Type"), r.body, err)
	}
	for _, p := range []string{"/mcp", "/v1", "/healthz", "/readyz"} {
		if idx.Endpoints[p] == "" {
			t.Errorf("GET / names no %s: %s", p, r.body)
		}
	}
	if idx.Name != "mcpblob" || !strings.Contains(idx.Docs, "docs/") {
		t.Errorf("GET /: name %q, docs %q", idx.Name, idx.Docs)
	}
	if r := c.do("POST", "/", strings.NewReader("x"), nil); r.status != http.StatusMethodNotAllowed ||
		!strings.Contains(string(r.body), `"method_not_allowed"`) {
		t.Errorf("POST /: %d %s, want 405 with a JSON error", r.status, r.body)
	}
	if r := c.do("GET", "/nope", nil, nil); r.status != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", r.status)
	}
}

// TestNoSessionNamesStatelessWay: the request a curl user sends after
// initialize, without the session header, learns both ways on: the session,
// or the stateless 2026-07-28 era.
func TestNoSessionNamesStatelessWay(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{})
	r := c.do("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	var answer struct {
		Error struct{ Message string }
	}
	if err := json.Unmarshal(r.body, &answer); r.status != http.StatusBadRequest || err != nil {
		t.Fatalf("tools/list without a session: %d %s", r.status, r.body)
	}
	for _, want := range []string{"Mcp-Session-Id", "stateless 2026-07-28", "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method", "params._meta", "io.modelcontextprotocol/protocolVersion"} {
		if !strings.Contains(answer.Error.Message, want) {
			t.Errorf("the answer %q does not name %q", answer.Error.Message, want)
		}
	}
}

// TestUploadsPageURL: POST /v1/uploads returns the endpoint's upload page
// (/upload/{token}) beside the endpoint, and the page serves.
func TestUploadsPageURL(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{})
	r := c.do("POST", "/v1/uploads", strings.NewReader(`{"key":"in/a.txt","maxSize":1024}`), nil)
	var up struct{ URL, PageURL, ExpiresAt string }
	if err := json.Unmarshal(r.body, &up); r.status != http.StatusCreated || err != nil {
		t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
	}
	tok, ok := strings.CutPrefix(up.URL, c.base+"/u/")
	if !ok || up.PageURL != c.base+"/upload/"+tok {
		t.Fatalf("POST /v1/uploads: url %q, pageUrl %q; want the page of the same token", up.URL, up.PageURL)
	}
	page := c.do("GET", up.PageURL, nil, nil)
	if page.status != http.StatusOK || !strings.Contains(string(page.body), `data-endpoint="/u/`+tok+`"`) {
		t.Errorf("GET pageUrl: %d %.300s", page.status, page.body)
	}
}

var (
	bytesOutRE = regexp.MustCompile(`bytes_out=(-?\d+)`)
	durationRE = regexp.MustCompile(`duration=(\S+)`)
)

// TestAccessLogSendfileBody: the access-log line of a sendfile download is
// written when the body is done and says what went out: a client that reads
// 1 MiB of a 64 MiB blob, waits, then hangs up is logged with less than the
// blob and at least its wait; a whole download with every byte.
func TestAccessLogSendfileBody(t *testing.T) {
	parallel(t)
	const size, wait = 64 << 20, 300 * time.Millisecond
	st := newLocalStore(t)
	logs := &logBuffer{}
	c := newBPClient(t, Options{Backend: st, Logger: slog.New(slog.NewTextHandler(logs, nil)), Front: front.Options{AccessLog: true}})
	if r := c.put("big.bin", bytes.Repeat([]byte("0123456789abcdef"), size/16), nil); r.status != http.StatusCreated {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}

	// Cut short: the line must not exist before the client hangs up.
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/blobs/big.bin HTTP/1.1\r\nHost: %s\r\nX-Request-Id: cut-short\r\n\r\n", strings.TrimPrefix(c.base, "http://"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	if _, err := io.CopyN(io.Discard, resp.Body, 1<<20); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait) // the server's sendfile stalls on the full socket meanwhile
	if strings.Contains(logs.String(), "request_id=cut-short") {
		t.Errorf("the download was logged while its body was still going out:\n%s", logs.String())
	}
	conn.Close()
	sent, d := accessLine(t, logs, "cut-short")
	t.Logf("cut short after 1 MiB and %v: bytes_out=%d duration=%v", wait, sent, d)
	if sent <= 0 || sent >= size || d < wait {
		t.Errorf("an aborted download logged bytes_out=%d duration=%v; want 0 < bytes_out < %d, duration ≥ %v", sent, d, size, wait)
	}

	// Whole.
	c.do("GET", "/v1/blobs/big.bin", nil, map[string]string{"X-Request-Id": "whole"})
	if sent, _ := accessLine(t, logs, "whole"); sent != size {
		t.Errorf("a whole download logged bytes_out=%d, want %d", sent, size)
	}
}

// accessLine waits for the access-log line of request id and returns its
// bytes_out and duration.
func accessLine(t *testing.T, logs *logBuffer, id string) (int64, time.Duration) {
	t.Helper()
	var line string
	eventually(t, 10*time.Second, func() bool {
		for l := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(l, "msg=request") && strings.Contains(l, "request_id="+id+" ") {
				line = l
				return true
			}
		}
		return false
	})
	b, d := bytesOutRE.FindStringSubmatch(line), durationRE.FindStringSubmatch(line)
	if b == nil || d == nil {
		t.Fatalf("access line without bytes_out or duration: %s", line)
	}
	sent, _ := strconv.ParseInt(b[1], 10, 64)
	dur, err := time.ParseDuration(d[1])
	if err != nil {
		t.Fatalf("duration %q: %v", d[1], err)
	}
	return sent, dur
}
