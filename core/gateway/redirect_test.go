package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// An upstream's redirect is neither followed (the gateway's credential
// and the signed principal header would go to the Location) nor relayed:
// the client gets 502 non_mcp. A resources/stream answer may redirect (to
// the raw bytes): that one passes to the client as it is.
func TestUpstreamRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer elsewhere.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusFound)
	}))
	defer up.Close()
	gw := serveGateway(t, newGateway(t, up.URL+"/mcp", nil))

	resp, b := post(t, gw.URL, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if _, _, kind := rpcErr(t, b); resp.StatusCode != http.StatusBadGateway || kind != kindNonMCP {
		t.Errorf("tools/list answered with a redirect: got %d %s, want 502 non_mcp", resp.StatusCode, b)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the gateway followed the upstream's redirect %d times", n)
	}

	g := newGateway(t, up.URL+"/mcp", nil)
	g.streams.Store(streamsOffered)
	gw2 := serveGateway(t, g)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, gw2.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"resources/stream","params":{"uri":"file:///a"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp2, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusFound || resp2.Header.Get("Location") != elsewhere.URL+"/mcp" {
		t.Errorf("a relayed resources/stream redirect: got %d Location %q", resp2.StatusCode, resp2.Header.Get("Location"))
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the gateway followed the upstream's redirect %d times", n)
	}
}
