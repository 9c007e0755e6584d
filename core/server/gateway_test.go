package server

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/core/gateway/principal"
)

// The gateway through the real front (`serve --upstream`): fasthttp in,
// net/http toward a test upstream written here.

// gwUpstream records what it got and answers a fixed SSE stream, or
// answerSize bytes of one SSE line when answerSize > 0.
type gwUpstream struct {
	mu         sync.Mutex
	calls      int
	header     http.Header
	sum        [32]byte
	n          int64
	answerSize int64
}

const gwSSE = "id: 1\nretry: 9\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{\"x\":\"\\u00e9\"}}\r\n\r\n"

func (u *gwUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	n, _ := io.Copy(h, r.Body)
	u.mu.Lock()
	u.calls++
	u.header, u.n = r.Header.Clone(), n
	copy(u.sum[:], h.Sum(nil))
	size := u.answerSize
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Mcp-Session-Id", "up-session")
	if size == 0 {
		io.WriteString(w, gwSSE)
		return
	}
	io.WriteString(w, "data: ")
	chunk := bytes.Repeat([]byte("A"), 64<<10)
	for sent := int64(0); sent < size; sent += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func (u *gwUpstream) seen() (calls int, h http.Header, sum [32]byte, n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls, u.header, u.sum, u.n
}

var gwPrincipalKey = bytes.Repeat([]byte{3}, 32)

// startGateway starts a server with API keys whose /mcp is a gateway to
// up.
func startGateway(t *testing.T, up http.Handler) string {
	t.Helper()
	us := httptest.NewServer(up)
	t.Cleanup(us.Close)
	base, _ := startTestServer(t, Options{Auth: Auth{Keys: []string{HashKey("alice-key") + " alice"}},
		Gateway: gateway.Options{Upstream: us.URL + "/mcp", Token: "gw-token", PrincipalKey: gwPrincipalKey}})
	return base
}

func gwPost(t *testing.T, base, key string, body io.Reader, n int64) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", body)
	req.ContentLength = n
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "up-session")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestGatewayThroughFront(t *testing.T) {
	parallel(t)
	up := &gwUpstream{}
	base := startGateway(t, up)

	resp, b := gwPost(t, base, "", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), -1)
	if calls, _, _, _ := up.seen(); resp.StatusCode != 401 || calls != 0 {
		t.Fatalf("no credential: %d %s, upstream called %d times; want 401 and no call", resp.StatusCode, b, calls)
	}

	for _, n := range []int64{-1, 0} { // chunked, then with Content-Length
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"f":"` +
			strings.Repeat("QUJD", 1<<20) + `"}}}`
		if n == 0 {
			n = int64(len(body))
		}
		resp, b = gwPost(t, base, "alice-key", strings.NewReader(body), n)
		if resp.StatusCode != 200 || string(b) != gwSSE || resp.Header.Get("Mcp-Session-Id") != "up-session" {
			t.Fatalf("length %d: %d %q, want the upstream's SSE byte for byte", n, resp.StatusCode, b)
		}
		_, h, sum, got := up.seen()
		if sum != sha256.Sum256([]byte(body)) || got != int64(len(body)) {
			t.Errorf("length %d: the upstream got %d bytes, not the client's %d", n, got, len(body))
		}
		who, err := principal.Verify(gwPrincipalKey, h.Get(principal.Header), time.Now())
		if err != nil || who != "alice" || h.Get("Authorization") != "Bearer gw-token" || h.Get("Mcp-Session-Id") != "up-session" {
			t.Errorf("upstream headers: principal %q (%v), %v", who, err, h)
		}
	}
}

// TestGatewayMemoryFlat: a large request body and a large answer pass the
// front and the gateway with the heap flat.
func TestGatewayMemoryFlat(t *testing.T) {
	heapTest(t)
	size := int64(128 << 20)
	if raceEnabled || testing.Short() {
		size = 32 << 20
	}
	up := &gwUpstream{answerSize: size}
	base := startGateway(t, up)
	stop := heapWatch(t)
	body := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"s":"`),
		io.LimitReader(repeatReader('B'), size), strings.NewReader(`"}}`))
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", body)
	req.Header.Set("Authorization", "Bearer alice-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	grew := stop()
	if _, _, _, got := up.seen(); err != nil || n < size || got < size {
		t.Fatalf("relayed %d bytes up and %d down of %d: %v", got, n, size, err)
	}
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes relaying %d bytes each way; bound 16 MiB", grew, size)
	}
	t.Logf("%d MiB each way through the gateway: heap grew %.1f MiB", size>>20, float64(grew)/(1<<20))
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
