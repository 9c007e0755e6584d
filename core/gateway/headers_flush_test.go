package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An SSE answer whose upstream sends its status and headers at once and
// then stays silent until it has something to say must have its status
// and headers reach the client as soon as the upstream sent them, not
// with the first event or keep-alive comment. The TypeScript SDK v2's
// server answers the standalone GET stream of a 2025-11-25 session so, and
// go-sdk's client waits for that GET's response headers inside Connect,
// before it sends notifications/initialized: a gateway holding them back
// stalled the whole session until the first keep-alive (15 s). A long
// tools/call answered as SSE is the same case (a client's response-header
// timeout would fire through the gateway and not directly).
func TestSSEHeadersBeforeFirstEvent(t *testing.T) {
	for _, tc := range []struct {
		name, method, body string
		offloadOver        int64
	}{
		{"GET stream", http.MethodGet, "", 0},
		{"tools/call", http.MethodPost, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, 0},
		{"tools/call offloading", http.MethodPost, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			up := silentSSEUpstream(release)
			defer up.Close()
			defer close(release)
			g := newGateway(t, up.URL, func(o *Options) {
				o.KeepAlive = time.Hour // no comment line makes the headers go
				if tc.offloadOver > 0 {
					o.Offload = OffloadOptions{Over: tc.offloadOver, Store: newFileOffloads(t)}
				}
			})
			gw := serveGateway(t, g)
			req, _ := http.NewRequest(tc.method, gw.URL+"/mcp", strings.NewReader(tc.body))
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Session-Id", "up-session")
			type answer struct {
				resp *http.Response
				err  error
			}
			got := make(chan answer, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				got <- answer{resp, err}
			}()
			select {
			case a := <-got:
				if a.err != nil {
					t.Fatal(a.err)
				}
				defer a.resp.Body.Close()
				if a.resp.StatusCode != http.StatusOK || a.resp.Header.Get("Mcp-Session-Id") != "up-session" {
					t.Errorf("%d, session %q; want 200 and the upstream's session", a.resp.StatusCode, a.resp.Header.Get("Mcp-Session-Id"))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream's status and headers did not reach the client while the upstream stayed silent")
			}
		})
	}
}

// silentSSEUpstream answers every request with an SSE stream's status and
// headers, flushed, and nothing more until release is closed.
func silentSSEUpstream(release <-chan struct{}) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "up-session")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
}
