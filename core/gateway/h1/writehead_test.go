package h1

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A request head goes into the connection's buffer without an
// allocation (the request target kept from the last request to the same
// URL, the length appended in place), and a value that would split the
// head is refused.
func TestWriteHead(t *testing.T) {
	var sb strings.Builder
	c := &conn{bw: bufio.NewWriter(&sb)}
	req, _ := http.NewRequest(http.MethodPost, "http://up.test/mcp?x=1", http.NoBody)
	req.ContentLength = 1234
	req.Header = http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s"}, "Accept": {"application/json, text/event-stream"}}
	if err := c.writeHead(req); err != nil {
		t.Fatal(err)
	}
	c.bw.Flush()
	head := sb.String()
	for _, want := range []string{"POST /mcp?x=1 HTTP/1.1\r\nHost: up.test\r\n", "Content-Length: 1234\r\n", "Mcp-Session-Id: s\r\n"} {
		if !strings.Contains(head, want) || !strings.HasSuffix(head, "\r\n\r\n") {
			t.Fatalf("head %q lacks %q", head, want)
		}
	}
	c.bw.Reset(io.Discard)
	if n := testing.AllocsPerRun(100, func() { _ = c.writeHead(req) }); n != 0 {
		t.Errorf("%.0f allocations per request head; want none", n)
	}
	for _, bad := range []string{"a\r\nX-Evil: 1", "a\nb", "a\x00b"} {
		req.Header.Set("X-Value", bad)
		if err := c.writeHead(req); err == nil {
			t.Errorf("value %q was written", bad)
		}
	}
}
