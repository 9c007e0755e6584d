package gate_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/pace"
)

// drained runs a handler that drains the request body as the gateway's
// /g route does (DrainSmall) and answers 302, and returns a connection to
// it.
func drained(t *testing.T) net.Conn {
	t.Helper()
	g := newGate(t, &pace.Slots{Max: 1, PerMax: 1})
	return serveConn(t, func(ctx *fasthttp.RequestCtx) {
		g.DrainSmall(ctx)
		ctx.Redirect("/d/elsewhere", http.StatusFound)
	})
}

// TestDrainSmallKeepsBodylessGETAlive: a GET without a body (no
// Content-Length, not chunked) leaves its connection open, so the request
// pipelined after it is served there; a chunked body, whose length is
// unknown, closes it. A bodyless GET was taken for one of unknown length,
// and every /g download closed its connection after the 302.
func TestDrainSmallKeepsBodylessGETAlive(t *testing.T) {
	get := "GET /g/token HTTP/1.1\r\nHost: localhost\r\n\r\n"
	chunked := "GET /g/token HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
	for _, c := range []struct {
		name, first string
		closed      bool
	}{
		{"no body", get, false},
		{"chunked body", chunked, true},
	} {
		conn := drained(t)
		if _, err := io.WriteString(conn, c.first+get); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusFound || resp.Close != c.closed {
			t.Fatalf("%s: status %d, connection closing %v; want 302, closing %v", c.name, resp.StatusCode, resp.Close, c.closed)
		}
		if c.closed {
			continue
		}
		if resp, err = http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("%s: the pipelined GET was not served on the same connection: %v", c.name, err)
		}
	}
}

// BodyLength reads fasthttp's "identity" request (neither Content-Length
// nor chunked) as no body, and passes the other lengths through.
func TestBodyLength(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n", 12},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", -1},
	} {
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(c.raw))); err != nil {
			t.Fatal(err)
		}
		if got := gate.BodyLength(&h); got != c.want {
			t.Errorf("%q: BodyLength %d, want %d (fasthttp says %d)", c.raw, got, c.want, h.ContentLength())
		}
	}
}
