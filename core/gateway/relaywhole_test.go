package gateway

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// An answer the transport holds whole, JSON or SSE (go-sdk's one event,
// its end in a write of its own just after), is read on the serving call
// and handed to the transport as one body: no streamed body, no reader
// goroutine. It arrives byte for byte.
func TestWholeAnswerOneBody(t *testing.T) {
	const event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":[]}}\n\n"
	const plain = `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`
	for _, tc := range []struct{ name, contentType, answer string }{
		{"sse", "text/event-stream", event},
		{"json", "application/json", plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.Header().Set("Mcp-Session-Id", "s")
				_, _ = w.Write([]byte(tc.answer))
				w.(http.Flusher).Flush() // the answer's end goes in a write of its own
			}))
			defer up.Close()
			g := newGateway(t, up.URL, nil)
			const body = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"blob:///a"}}`
			// The answer's end is waited for up to firstEventWait unless
			// the machine stalls that long; one of several suffices.
			const requests = 5
			whole := 0
			for range requests {
				rec := httptest.NewRecorder()
				nw := &netHTTPWriter{w: rec}
				g.ServeMCP(&Request{Method: http.MethodPost, Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s"}},
					Body: strings.NewReader(body), ContentLength: int64(len(body)), Principal: "alice", Context: t.Context()}, nw)
				if nw.stream == nil {
					whole++
				}
				nw.finish()
				if rec.Code != http.StatusOK || rec.Body.String() != tc.answer || rec.Header().Get("Mcp-Session-Id") != "s" {
					t.Fatalf("%d %q %v; want 200 and the upstream's answer byte for byte", rec.Code, rec.Body, rec.Header())
				}
			}
			if whole == 0 {
				t.Errorf("none of %d answers held whole by the transport went as one body; each was streamed", requests)
			}
		})
	}
}

// copyingWriter is a netHTTPWriter that copies a body it is given
// (BodyCopier), as the fasthttp front does.
type copyingWriter struct {
	*netHTTPWriter
	copies int
}

func (c *copyingWriter) SetBodyCopy(b []byte) {
	c.copies++
	c.body = append([]byte(nil), b...)
}

// To a transport that copies a body it is given, an answer held whole goes
// through the gateway's pooled buffer (SetBodyCopy), not a buffer made for
// each answer; answers one after another each arrive as sent.
func TestWholeAnswerCopied(t *testing.T) {
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"n":` + strconv.FormatInt(n.Add(1), 10) + `}}`))
	}))
	defer up.Close()
	g := newGateway(t, up.URL, nil)
	const body = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"blob:///a"}}`
	for i := 1; i <= 3; i++ {
		rec := httptest.NewRecorder()
		cw := &copyingWriter{netHTTPWriter: &netHTTPWriter{w: rec}}
		g.ServeMCP(&Request{Method: http.MethodPost, Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s"}},
			Body: strings.NewReader(body), ContentLength: int64(len(body)), Principal: "alice", Context: t.Context()}, cw)
		cw.finish()
		want := `{"jsonrpc":"2.0","id":1,"result":{"n":` + strconv.Itoa(i) + `}}`
		if cw.copies != 1 || cw.stream != nil || rec.Body.String() != want {
			t.Fatalf("answer %d: %d copies, streamed %v, %q; want one copy of %q", i, cw.copies, cw.stream != nil, rec.Body, want)
		}
	}
}
