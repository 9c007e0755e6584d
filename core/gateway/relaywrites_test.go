package gateway

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/h1"
)

// writeCountingConn counts the writes to a connection.
type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCountingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A small request the gateway read whole goes to the upstream as one
// write, headers and body together (net/http flushed the headers of a
// body it could not see was in memory in a write of their own, one more
// syscall and loopback segment on every relayed request), on one
// kept-alive connection.
func TestSmallRequestOneWriteUpstream(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	}))
	defer up.Close()
	var writes, dials atomic.Int64
	g := newGateway(t, up.URL, nil)
	g.roundTrip = countingTransport(&writes, &dials).RoundTrip
	gw := serveGateway(t, g)
	const requests = 3
	for range requests {
		resp, b := post(t, gw.URL, map[string]string{"Mcp-Session-Id": "s"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusOK || string(b) != `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
	if n := writes.Load(); n != requests {
		t.Errorf("%d writes to the upstream for %d small requests; want one each (headers and body together)", n, requests)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections for %d requests one after another; want one, kept alive", n, requests)
	}
}

// countingTransport is the gateway's upstream client with its writes and
// dials counted.
func countingTransport(writes, dials *atomic.Int64) *h1.Transport {
	return h1.New(h1.Options{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCountingConn{c, writes}, nil
	}})
}

// A small body the transport hands over whole without its end (every byte
// in one read, io.EOF only from the next, as a bytes.Reader does) is read
// whole once its declared length is in: it goes upstream with the headers
// in one write, not streamed after them.
func TestDeclaredLengthBodyOneWrite(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}))
	defer up.Close()
	var writes, dials atomic.Int64
	g := newGateway(t, up.URL, nil)
	g.roundTrip = countingTransport(&writes, &dials).RoundTrip
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	const requests = 3
	for range requests {
		rec := httptest.NewRecorder()
		nw := &netHTTPWriter{w: rec}
		g.ServeMCP(&Request{Method: http.MethodPost, Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s"}},
			Body: bytes.NewReader([]byte(body)), ContentLength: int64(len(body)), Principal: "alice", Context: t.Context()}, nw)
		nw.finish()
		if rec.Code != http.StatusOK || rec.Body.String() != answer {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	if n := writes.Load(); n != requests {
		t.Errorf("%d writes to the upstream for %d small requests; want one each (headers and body together)", n, requests)
	}
}

// firstBytesWriter is a netHTTPWriter that records HeadersWithFirstBytes.
type firstBytesWriter struct {
	*netHTTPWriter
	withFirst bool
}

func (f *firstBytesWriter) HeadersWithFirstBytes() { f.withFirst = true }

// An SSE answer whose first event comes with its headers (go-sdk's server
// answers every POST so) is relayed with the client's headers and that
// event together: an answer that ends there with its length (one write to
// the client, no chunked end), a longer one with the transport told it
// need not send the headers alone first. A silent upstream's headers still
// go at once (TestSSEHeadersBeforeFirstEvent).
func TestSSEHeadersWithFirstEvent(t *testing.T) {
	const event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"
	const progress = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	for _, tc := range []struct {
		name  string
		later bool // a second event follows after a pause
	}{{"one event", false}, {"more later", true}} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if !tc.later {
					_, _ = w.Write([]byte(event))
					return
				}
				_, _ = w.Write([]byte(progress))
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
				_, _ = w.Write([]byte(event))
			}))
			defer up.Close()
			g := newGateway(t, up.URL, nil)
			var told atomic.Int64
			gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fw := &firstBytesWriter{netHTTPWriter: &netHTTPWriter{w: w}}
				g.ServeMCP(&Request{Method: r.Method, Header: r.Header, Body: r.Body, ContentLength: r.ContentLength,
					Principal: "alice", Context: r.Context()}, fw)
				if fw.withFirst {
					told.Add(1)
				}
				fw.finish()
			}))
			defer gw.Close()
			want := event
			if tc.later {
				want = progress + event
			}
			// The first event (and an answer's end) is read within
			// firstEventWait unless the machine stalls the reading
			// goroutine that long; one of several requests suffices.
			const requests = 5
			withLength := 0
			for range requests {
				resp, b := post(t, gw.URL, map[string]string{"Mcp-Session-Id": "s"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				if resp.StatusCode != http.StatusOK || string(b) != want {
					t.Fatalf("%d %q; want 200 and the upstream's events", resp.StatusCode, b)
				}
				if resp.ContentLength == int64(len(want)) {
					withLength++
				}
			}
			switch {
			case !tc.later && withLength == 0:
				t.Errorf("none of %d answers of one event had its length", requests)
			case tc.later && withLength > 0:
				t.Errorf("%d answers with more events after a pause had a length", withLength)
			case tc.later && told.Load() == 0:
				t.Errorf("in none of %d answers was the transport told the stream's headers may go with its first event", requests)
			}
		})
	}
}
