package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
)

// netHTTPWriter is a ResponseWriter over net/http, for the tests: the
// gateway is transport-neutral, and net/http is the simplest transport.
type netHTTPWriter struct {
	w      http.ResponseWriter
	status int
	size   int64
	body   []byte
	stream func(StreamWriter) error
}

func (n *netHTTPWriter) SetStatus(code int)           { n.status = code }
func (n *netHTTPWriter) AddHeader(name, value string) { n.w.Header().Add(name, value) }
func (n *netHTTPWriter) SetBody(b []byte)             { n.body = b }
func (n *netHTTPWriter) SetBodyStream(size int64, write func(StreamWriter) error) {
	n.size, n.stream = size, write
}

// finish sends what the gateway set, as a server transport does once the
// serving call returned.
func (n *netHTTPWriter) finish() {
	if n.status == 0 {
		n.status = http.StatusOK
	}
	if n.stream != nil && n.size >= 0 {
		n.w.Header().Set("Content-Length", itoa(n.size))
	}
	n.w.WriteHeader(n.status)
	if n.stream != nil {
		if err := n.stream(flushWriter{n.w}); err != nil {
			panic(http.ErrAbortHandler) // net/http's way to cut a response
		}
		return
	}
	_, _ = n.w.Write(n.body)
}

type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f flushWriter) Flush() error                { return http.NewResponseController(f.w).Flush() }

func itoa(n int64) string { return jsonNumber(n) }

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// serveGateway serves g on a loopback test server: /mcp relayed, /g/
// downloads, the caller's principal taken from the test header X-Principal
// ("alice" without it).
func serveGateway(t *testing.T, g *Gateway) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nw := &netHTTPWriter{w: w}
		p := r.Header.Get("X-Principal")
		if p == "" {
			p = "alice"
		}
		req := &Request{Method: r.Method, Header: r.Header, ContentLength: r.ContentLength,
			Principal: p, Context: r.Context()}
		if r.Body != http.NoBody && r.Body != nil {
			req.Body = r.Body
		}
		if tok, ok := strings.CutPrefix(r.URL.Path, DownloadPrefix); ok {
			g.ServeDownload(req, tok, nw)
		} else {
			g.ServeMCP(req, nw)
		}
		nw.finish()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newGateway returns a gateway in front of upstream with a signed
// principal header and an upstream token.
func newGateway(t *testing.T, upstream string, mod func(*Options)) *Gateway {
	t.Helper()
	o := Options{Upstream: upstream, Keyring: token.NewRandomKeyring(), Token: "upstream-secret",
		PrincipalKey: bytes.Repeat([]byte{1}, 32), PublicURL: "http://gateway.test",
		Timeout: 5 * time.Second}
	if mod != nil {
		mod(&o)
	}
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// post sends body to url's /mcp with hdr and returns the answer whole.
func post(t *testing.T, url string, hdr map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp, b
}

// rpcErr decodes a JSON-RPC error answer.
func rpcErr(t *testing.T, b []byte) (code int, msg, kind string) {
	t.Helper()
	var m struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Upstream string `json:"upstream"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC error: %q", b)
	}
	return m.Error.Code, m.Error.Message, m.Error.Data.Upstream
}
