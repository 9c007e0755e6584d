package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// A hostile upstream cannot make the gateway's memory grow: each attack is
// driven through a gateway on loopback while the heap is sampled, and the
// peak growth must stay under a bound far below what the attack sends.

// endless writes chunk to w until it fails or n bytes went.
func endless(w io.Writer, chunk []byte, n int64) {
	for sent := int64(0); sent < n; sent += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// attackSize is how much a hostile upstream sends: 256 MiB, 32 MiB under
// -short or -race.
func attackSize() int64 {
	if testing.Short() || raceEnabled {
		return 32 << 20
	}
	return 256 << 20
}

func TestHostileEndlessHeaders(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// The request first: an answer before it is an unsolicited
				// response to net/http, which drops the connection
				// (unreachable, not over_bounds).
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				go io.Copy(io.Discard, br)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
				endless(c, []byte("X-Pad: "+strings.Repeat("a", 4000)+"\r\n"), attackSize())
			}()
		}
	}()
	gw := serveGateway(t, newGateway(t, "http://"+ln.Addr().String()+"/mcp", nil))
	heap := storagetest.StartHeapMonitor()
	resp, b := post(t, gw.URL, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	grew := heap.Stop()
	if _, _, kind := rpcErr(t, b); resp.StatusCode != 502 || kind != kindOverBounds {
		t.Errorf("got %d %s, want 502 over_bounds", resp.StatusCode, b)
	}
	if grew > 4<<20 {
		t.Errorf("heap grew %d bytes under endless headers; bound 4 MiB", grew)
	}
	t.Logf("endless headers: heap grew %.2f MiB", float64(grew)/(1<<20))
}

// hostileSSE answers every request with 200 text/event-stream whose one
// data line never ends (attackSize bytes of it).
func hostileSSE(t *testing.T, ct string) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", ct)
		if ct == "text/event-stream" {
			io.WriteString(w, "data: ")
		} else {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"resources":{}},"x":"`)
		}
		endless(w, []byte(strings.Repeat("A", 64<<10)), attackSize())
	}))
	t.Cleanup(up.Close)
	return up
}

// TestHostileEndlessLineRelayed: a line without end on a relayed answer
// streams through in constant memory.
func TestHostileEndlessLineRelayed(t *testing.T) {
	gw := serveGateway(t, newGateway(t, hostileSSE(t, "text/event-stream").URL, nil))
	heap := storagetest.StartHeapMonitor()
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, bufio.NewReaderSize(resp.Body, 32<<10))
	if err != nil {
		t.Errorf("reading the relayed answer: %v", err)
	}
	resp.Body.Close()
	grew := heap.Stop()
	if n < attackSize() {
		t.Errorf("relayed %d bytes of %d", n, attackSize())
	}
	if grew > 4<<20 {
		t.Errorf("heap grew %d bytes relaying a %d-byte line; bound 4 MiB", grew, n)
	}
	t.Logf("endless SSE line, %d MiB relayed: heap grew %.2f MiB", n>>20, float64(grew)/(1<<20))
}

// TestHostileHugeAnswerRewritten: an initialize answer the gateway would
// rewrite, over its bound, JSON or one SSE line, is refused with 502 in
// bounded memory.
func TestHostileHugeAnswerRewritten(t *testing.T) {
	for _, ct := range []string{"application/json", "text/event-stream"} {
		gw := serveGateway(t, newGateway(t, hostileSSE(t, ct).URL, func(o *Options) { o.Timeout = 30 * time.Second }))
		heap := storagetest.StartHeapMonitor()
		resp, b := post(t, gw.URL, nil, initLegacy)
		grew := heap.Stop()
		if _, _, kind := rpcErr(t, b); resp.StatusCode != 502 || kind != kindOverBounds {
			t.Errorf("%s: got %d %s, want 502 over_bounds", ct, resp.StatusCode, b)
		}
		// The answer has no end (attackSize, 256 MiB at full size): the
		// bound is a few times the one line read (its growth while
		// appended, the event's raw copy), whatever the answer's size. 6x,
		// not 4x: measured 3.3 MiB alone, 3.8 MiB after the package's
		// other memory tests, whose last bytes may still be in flight.
		if bound := uint64(6 * DefaultMaxRewriteBytes); grew > bound {
			t.Errorf("%s: heap grew %d bytes; bound %d", ct, grew, bound)
		}
		t.Logf("%s initialize answer without end: heap grew %.2f MiB", ct, float64(grew)/(1<<20))
	}
}
