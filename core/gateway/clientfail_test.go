package gateway

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// brokenBody yields head, then fails as a client's body does on bad
// chunked framing.
type brokenBody struct{ head string }

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.head != "" {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	return 0, errors.New("invalid chunk size")
}

// A client body that breaks is the client's fault: 400 -32700, as core/mcp
// answers it; neither 200 with nothing (the gateway looking for the
// method) nor 502 "unreachable" (the body relayed as it arrives).
func TestClientBodyBreaks(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	g := newGateway(t, up.URL+"/mcp", nil)
	for _, tc := range []struct {
		name, method, head string
	}{
		{"before the method", "", ""},
		{"while the method is looked for", "", `{"jsonrpc":"2.0","id":1,`},
		{"an initialize read whole", "initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize",`},
		{"an initialize read whole past the look", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 20<<10)},
		{"with Mcp-Method, while the id is looked for", "tools/list", `{"jsonrpc":"2.0",`},
		{"relayed as it arrives", "tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`},
		{"relayed as it arrives, no Mcp-Method", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			if tc.method != "" {
				h.Set("Mcp-Method", tc.method)
			}
			rec := httptest.NewRecorder()
			nw := &netHTTPWriter{w: rec}
			g.ServeMCP(&Request{Method: http.MethodPost, Header: h, Body: &brokenBody{head: tc.head}, ContentLength: -1, Principal: "alice"}, nw)
			nw.finish()
			if b := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(b, `"code":-32700`) {
				t.Errorf("got %d %q, want 400 with -32700", rec.Code, b)
			}
		})
	}
}
