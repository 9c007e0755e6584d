package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
)

// An open event stream through the front (fasthttp, chunked) whose
// upstream sends its status and headers and then nothing: they must reach
// the client at once, not with the first event or keep-alive comment
// (the gateway's Flush before the first write; go-sdk's client waits for
// the standalone GET's headers inside Connect).
func TestGatewaySSEHeadersAtOnce(t *testing.T) {
	parallel(t)
	release := make(chan struct{})
	us := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "up-session")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer us.Close()
	defer close(release)
	base, _ := startTestServer(t, Options{Auth: Auth{Keys: []string{HashKey("alice-key") + " alice"}},
		Gateway: gateway.Options{Upstream: us.URL + "/mcp", PrincipalKey: gwPrincipalKey, KeepAlive: time.Hour}})
	req, _ := http.NewRequest(http.MethodGet, base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "up-session")
	req.Header.Set("Authorization", "Bearer alice-key")
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
}
