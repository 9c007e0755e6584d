package gate_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/pace"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

const testKey = "k-admit-test"

// newGate is a loopback gate with one API key (principal "alice") and
// slots as given.
func newGate(t *testing.T, slots *pace.Slots) *gate.Gate {
	t.Helper()
	sum := sha256.Sum256([]byte(testKey))
	keys, err := auth.LoadKeys("", []string{hex.EncodeToString(sum[:]) + " alice"})
	if err != nil {
		t.Fatal(err)
	}
	return &gate.Gate{Auth: &auth.Authenticator{Keys: keys}, Loopback: true, Uploads: slots,
		BodyMinRate: -1, ReadTimeout: 5 * time.Second, Log: slog.New(slog.DiscardHandler)}
}

// served is what the /mcp handler of serve saw of one request.
type served struct {
	admitted bool
	read     int64 // body bytes core/mcp's stand-in read
	received int64 // the Record's count of body bytes read
}

// serve runs an /mcp handler as front's serveMCP does (admit, read the
// body, close) on a loopback listener (the rate rule needs a connection's
// read deadlines) and returns a connection to it and what the handler saw,
// one per request.
func serve(t *testing.T, g *gate.Gate) (net.Conn, <-chan served) {
	t.Helper()
	tel := telemetry.New(nil, slog.New(slog.DiscardHandler), false)
	seen := make(chan served, 8)
	c := serveConn(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue(telemetry.IDKey, tel.Begin(string(ctx.Method()), "/mcp", ""))
		var sw served
		defer func() { sw.received = telemetry.Of(ctx).Received; seen <- sw }()
		in, ok := g.AdmitMCP(ctx)
		if !ok {
			return
		}
		sw.admitted = true
		defer in.Close(ctx)
		if in.Body != nil {
			sw.read, _ = io.Copy(io.Discard, in.Body)
		}
		ctx.SetStatusCode(http.StatusOK)
	})
	return c, seen
}

// serveConn serves h on a loopback listener (the rate rule needs a
// connection's read deadlines) and returns a connection to it.
func serveConn(t *testing.T, h fasthttp.RequestHandler) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fasthttp.Server{StreamRequestBody: true, ReadTimeout: 5 * time.Second, Handler: h}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Shutdown(); _ = ln.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// post is a raw POST /mcp with body, on a localhost Host unless host says
// otherwise, with the test key when keyed.
func post(host string, keyed bool, body string) string {
	h := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n"
	if keyed {
		h += "Authorization: Bearer " + testKey + "\r\n"
	}
	return h + "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// rpcMessage is the message of a JSON-RPC error body.
func rpcMessage(t *testing.T, resp *http.Response) string {
	t.Helper()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return e.Error.Message
}

// TestAdmitMCPRefusals: each refusal of /mcp keeps its status, message,
// headers and treatment of the body (read and kept alive, left, or the
// connection closed), now that every check is decided first and the
// answer goes out at one point.
func TestAdmitMCPRefusals(t *testing.T) {
	big := strings.Repeat("x", gate.UploadThreshold+1)
	cases := []struct {
		name, req, message string
		slots              [2]int // Max, PerMax
		status             int
		header             map[string]string
		close              bool
		received           int64
	}{
		{name: "no credential, a small body read first", req: post("localhost", false, `{"a":1}`),
			status: 401, message: "Unauthorized: a valid bearer token is required", received: 7,
			header: map[string]string{"Cache-Control": "no-store", "WWW-Authenticate": `Bearer scope="` + auth.ScopeRead + " " + auth.ScopeWrite + `"`}},
		{name: "Host refused, the body left", req: post("evil.example", true, `{"a":1}`),
			status: 403, message: "Forbidden: Host is not a localhost name"},
		{name: "every slot taken", req: post("localhost", true, big), slots: [2]int{0, 1},
			status: 503, message: "Service Unavailable: too many uploads in progress; retry later",
			header: map[string]string{"Retry-After": "2"}, close: true},
		{name: "the principal's slots taken", req: post("localhost", true, big), slots: [2]int{1, 0},
			status: 429, message: "Too Many Requests: too many uploads in progress for this principal; retry later",
			header: map[string]string{"Retry-After": "2"}, close: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, seen := serve(t, newGate(t, &pace.Slots{Max: tc.slots[0], PerMax: tc.slots[1]}))
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := rpcMessage(t, resp); got != tc.message {
				t.Errorf("message %q, want %q", got, tc.message)
			}
			for name, want := range tc.header {
				if got := resp.Header.Get(name); !strings.HasPrefix(got, want) {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			if resp.Close != tc.close {
				t.Errorf("connection closes: %v, want %v", resp.Close, tc.close)
			}
			sw := <-seen
			if sw.admitted || sw.received != tc.received {
				t.Errorf("admitted %v, body bytes counted %d; want refused, %d", sw.admitted, sw.received, tc.received)
			}
		})
	}
}

// TestAdmitMCPKeepsAliveAfterRefusal: a refused request's small body is
// read before the answer, so the request pipelined after it is served on
// the same connection.
func TestAdmitMCPKeepsAliveAfterRefusal(t *testing.T) {
	c, seen := serve(t, newGate(t, &pace.Slots{Max: 1, PerMax: 1}))
	if _, err := io.WriteString(c, post("localhost", false, `{"refused":true}`)+post("localhost", true, `{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for i, want := range []int{401, 200} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != want {
			t.Errorf("response %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if first, second := <-seen, <-seen; first.admitted || !second.admitted || second.read != int64(len(`{"ok":true}`)) {
		t.Errorf("handler saw %+v then %+v; want a refusal, then the second body read whole", first, second)
	}
}

// TestAdmitMCPUploadHoldsSlotUntilClose: an admitted upload holds its
// slot until the admission is closed, and its body is counted once.
func TestAdmitMCPUploadHoldsSlotUntilClose(t *testing.T) {
	slots := &pace.Slots{Max: 1, PerMax: 1}
	c, seen := serve(t, newGate(t, slots))
	body := strings.Repeat("x", gate.UploadThreshold+1)
	if _, err := io.WriteString(c, post("localhost", true, body)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sw := <-seen
	if sw.read != int64(len(body)) || sw.received != int64(len(body)) {
		t.Errorf("read %d, counted %d; want %d each", sw.read, sw.received, len(body))
	}
	if n := slots.InProgress(); n != 0 {
		t.Errorf("%v slots still taken after Close", n)
	}
}

// TestAdmitMCPCutOffBody: a body that stops arriving is cut off by the
// rate rule; closing the admission replaces the answer with 408 and closes
// the connection.
func TestAdmitMCPCutOffBody(t *testing.T) {
	g := newGate(t, &pace.Slots{Max: 1, PerMax: 1})
	g.BodyMinRate, g.BodyGrace, g.ReadTimeout = 1<<20, 50*time.Millisecond, 200*time.Millisecond
	c, seen := serve(t, g)
	const size, sent = 1 << 20, 16 << 10
	req := post("localhost", true, strings.Repeat("x", size))
	if _, err := io.WriteString(c, req[:len(req)-(size-sent)]); err != nil { // the first bytes, then nothing
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rpcMessage(t, resp), "Request Timeout: the request body arrived slower than the minimum rate"; resp.StatusCode != 408 || got != want || !resp.Close {
		t.Errorf("status %d, message %q, closes %v; want 408, %q, closing", resp.StatusCode, got, resp.Close, want)
	}
	if sw := <-seen; !sw.admitted || sw.read != sent || sw.received != sent {
		t.Errorf("handler saw %+v; want admitted, %d bytes read and counted", sw, sent)
	}
}
