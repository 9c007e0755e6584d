package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/token"
)

// BenchmarkRelaySmall relays the two small requests of G1 (a 4 KiB
// resources/read answered as one SSE event, and tools/list) from an
// upstream that answers as go-sdk's server does: the event, then the
// answer's end in a write of its own. allocs/op counts the upstream's
// too (in the same process). The writer copies a body into a buffer of its
// own, as the fasthttp front does (BodyCopier).
func BenchmarkRelaySmall(b *testing.B) {
	blob := strings.Repeat("QUJD", 4096*4/3/4)
	read := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":[{\"uri\":\"blob:///a\",\"mimeType\":\"application/octet-stream\",\"blob\":\"" + blob + "\"}]}}\n\n"
	list := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}}]}}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "s")
		answer := list
		if r.Header.Get("X-Kind") == "read" {
			answer = read
		}
		_, _ = w.Write([]byte(answer))
		w.(http.Flusher).Flush()
	}))
	defer up.Close()
	g, err := New(Options{Upstream: up.URL, Keyring: token.NewRandomKeyring(), PublicURL: "http://gateway.test",
		Files: FileOptions{Opener: uploadedFiles{}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, kind, body string }{
		{"read4KiB", "read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"blob:///a"}}`},
		{"tools_list", "list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var kept []byte
			hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
				"Mcp-Session-Id": {"s"}, "Mcp-Protocol-Version": {"2025-11-25"}, "X-Kind": {tc.kind}}
			b.ReportAllocs()
			for range b.N {
				rec := httptest.NewRecorder()
				nw := &reusingWriter{netHTTPWriter: &netHTTPWriter{w: rec}, kept: &kept}
				g.ServeMCP(&Request{Method: http.MethodPost, Header: hdr, Body: strings.NewReader(tc.body),
					ContentLength: int64(len(tc.body)), Principal: "alice", Context: b.Context()}, nw)
				nw.finish()
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code, rec.Body)
				}
			}
		})
	}
}

// reusingWriter is a netHTTPWriter that copies a body it is given into
// one buffer of its own, answer after answer.
type reusingWriter struct {
	*netHTTPWriter
	kept *[]byte
}

func (r *reusingWriter) SetBodyCopy(b []byte) {
	*r.kept = append((*r.kept)[:0], b...)
	r.body = *r.kept
}
