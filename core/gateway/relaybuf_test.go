//go:build !race

package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway/readahead"
)

// flushDiscard is a StreamWriter that keeps nothing.
type flushDiscard struct{}

func (flushDiscard) Write(p []byte) (int, error) { return len(p), nil }
func (flushDiscard) Flush() error                { return nil }

// Relaying an SSE answer takes its two 32 KiB buffers from the pool and
// puts them back: a small answer, the common case (every POST a go-sdk
// upstream answers), must not allocate them anew. (Not under the race
// detector, which drops a share of sync.Pool's puts on purpose.) Before, copySSE never
// put them back, and every relayed SSE answer allocated 64 KiB.
func TestSSEBuffersReused(t *testing.T) {
	g := newGateway(t, "http://127.0.0.1:1", nil)
	answer := "event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n"
	for _, inBuffer := range []bool{false, true} {
		relay := func() {
			if err := g.copySSE(flushDiscard{}, readahead.Start(strings.NewReader(answer), inBuffer, &copyBuffers)); err != nil {
				t.Fatal(err)
			}
		}
		relay() // the pool's first buffers
		const runs = 200
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			relay()
		}
		runtime.ReadMemStats(&after)
		perRelay := (after.TotalAlloc - before.TotalAlloc) / runs
		const bound = 16 << 10 // two buffers are 64 KiB
		t.Logf("inBuffer %v: %d bytes allocated per relayed SSE answer", inBuffer, perRelay)
		if perRelay > bound {
			t.Errorf("inBuffer %v: %d bytes allocated per relayed SSE answer; want at most %d (its buffers back in the pool)",
				inBuffer, perRelay, bound)
		}
	}
}

// An answer the gateway edits (tools/list, initialize) is read through a
// pooled reader: a small one held whole allocates well under the 4 KiB
// reader it needed anew each time before.
func TestEditReaderReused(t *testing.T) {
	g := newGateway(t, "http://127.0.0.1:1", func(o *Options) { o.Files.Opener = uploadedFiles{} })
	const answer = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"
	r := &Request{Method: http.MethodPost, Header: http.Header{}, Principal: "alice", Context: t.Context()}
	c := call{method: "tools/list", id: json.RawMessage("1")}
	relay := func() {
		rec := httptest.NewRecorder()
		nw := &netHTTPWriter{w: rec}
		resp := &http.Response{StatusCode: http.StatusOK, ContentLength: -1,
			Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(answer))}
		g.relayEdited(r, nw, resp, func() {}, c, advertiseUpload, true)
		nw.finish()
		if rec.Body.String() != answer {
			t.Fatalf("relayed %q, want the upstream's answer", rec.Body.String())
		}
	}
	relay()
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		relay()
	}
	runtime.ReadMemStats(&after)
	perRelay := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d bytes allocated per edited answer", perRelay)
	const bound = 4 << 10
	if perRelay > bound {
		t.Errorf("%d bytes allocated per edited answer; want at most %d (its reader from the pool)", perRelay, bound)
	}
}
