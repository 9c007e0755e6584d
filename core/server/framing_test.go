package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smuggledBody is what follows each framing payload's header block: an
// empty chunked body, then a request of its own. A reader that frames by
// Transfer-Encoding sees that second request; one that frames by
// Content-Length ({N}: the length of all of it) sees one body.
const smuggledBody = "0\r\n\r\n" + "GET /healthz HTTP/1.1\r\nHost: {H}\r\n\r\n"

// framingPayloads are request heads ({M} method, {P} path, {H} host, {N}
// the Content-Length of smuggledBody) whose framing two parsers can read
// differently. Before package framing, fasthttp answered the ones marked
// served and kept the connection: the request after the chunked body was
// answered too (TE.CL smuggling behind a front that frames by
// Content-Length). The others fasthttp refused already.
var framingPayloads = []struct {
	name, head string
	served     bool
}{
	{"te-cl", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked\r\nContent-Length: {N}\r\n\r\n", true},
	{"cl-te", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nContent-Length: {N}\r\nTransfer-Encoding: chunked\r\n\r\n", true},
	{"te-fold", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", true},
	{"te-fold-cl", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nContent-Length: {N}\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", true},
	{"fold-other", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nX-Pad: a\r\n b\r\nTransfer-Encoding: chunked\r\n\r\n", true},
	{"te-tab", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding:\tchunked\r\n\r\n", true},
	{"te-tab-cl", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding:\tchunked\r\nContent-Length: {N}\r\n\r\n", true},
	{"te-upper", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: CHUNKED\r\n\r\n", true},
	{"te-upper-cl", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: CHUNKED\r\nContent-Length: {N}\r\n\r\n", true},
	{"te-identity-cl", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: identity\r\nContent-Length: {N}\r\n\r\n", true},
	{"bare-lf-field", "{M} {P} HTTP/1.1\r\nHost: {H}\nTransfer-Encoding: chunked\r\nContent-Length: {N}\r\n\r\n", true},
	{"bare-lf-all", "{M} {P} HTTP/1.1\nHost: {H}\nTransfer-Encoding: chunked\n\n", true},
	{"bare-lf-end", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked\r\n\n", true},
	{"te-cl-expect", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\nContent-Length: {N}\r\n\r\n", true},
	{"te-list", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false},
	{"te-twice", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	{"te-space-colon", "{M} {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding : chunked\r\nContent-Length: {N}\r\n\r\n", false},
	{"te-http10", "{M} {P} HTTP/1.0\r\nHost: {H}\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: {N}\r\n\r\n", false},
}

// framingRoutes are the surfaces every payload goes to: each must refuse it.
var framingRoutes = []struct{ method, path string }{
	{"POST", "/mcp"}, {"PUT", "/v1/blobs/k"}, {"GET", "/v1/blobs"}, {"GET", "/d/tok"}, {"POST", "/u/tok"},
	{"GET", "/upload/tok"}, {"GET", "/healthz"}, {"GET", "/nowhere"},
}

// framingRequest is payload head on route, with smuggledBody after it.
func framingRequest(head, method, path, host string) string {
	body := strings.ReplaceAll(smuggledBody, "{H}", host)
	r := strings.NewReplacer("{M}", method, "{P}", path, "{H}", host, "{N}", strconv.Itoa(len(body)))
	return r.Replace(head) + body
}

// TestFramingRefused: each framing payload, on every route, is answered 400
// with the route's JSON error body and the connection is closed right
// after: the request hidden after the chunked body is never answered.
// Before package framing, the payloads marked served got the route's
// answer, then the smuggled /healthz got 200 on the same connection.
func TestFramingRefused(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t)})
	host := strings.TrimPrefix(base, "http://")
	for _, p := range framingPayloads {
		for _, r := range framingRoutes {
			t.Run(p.name+r.path, func(t *testing.T) {
				t.Parallel()
				status, body, rest, err := sendFraming(t, host, framingRequest(p.head, r.method, r.path, host))
				if status != http.StatusBadRequest {
					t.Errorf("answer %d %.200q; want 400", status, body)
				} else {
					wantFramingError(t, r.path, body)
				}
				switch {
				case len(rest) > 0:
					t.Errorf("the request after the body was answered: %.200q", rest)
				case err != nil:
					t.Errorf("the connection stayed open after the 400: %v", err)
				}
			})
		}
	}
}

// sendFraming writes req on a new connection and reads the first answer,
// then everything else until the server closes: rest is what came after
// the first answer, err why reading stopped other than by a close.
func sendFraming(t *testing.T, host, req string) (status int, body, rest []byte, err error) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			// The server may close with bytes unread; the reset can, rarely,
			// take the answer with it (see sendRefused).
			if errors.Is(err, syscall.ECONNRESET) && attempt < 2 {
				continue
			}
			t.Fatalf("no answer: %v", err)
		}
		for resp.StatusCode == http.StatusContinue {
			if resp, err = http.ReadResponse(br, nil); err != nil {
				t.Fatalf("no answer after 100 Continue: %v", err)
			}
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rest, err = io.ReadAll(br)
		if errors.Is(err, syscall.ECONNRESET) {
			err = nil // closed, with request bytes unread
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = errors.New("still open 3 s after the answer")
		}
		return resp.StatusCode, body, rest, err
	}
}

// wantFramingError checks a refusal's body: the HTTP JSON error
// (bad_request), or on /mcp a JSON-RPC error (errorHandler, which answers
// what fasthttp refuses itself, no longer knows the path); each says what
// was wrong.
func wantFramingError(t *testing.T, path string, body []byte) {
	t.Helper()
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("400 body %q: %v", body, err)
	}
	msg := e.Error.Message
	switch {
	case e.Error.Code == "bad_request":
	case path == "/mcp" && e.JSONRPC == "2.0" && strings.HasPrefix(msg, "Bad Request: "):
	default:
		t.Errorf("400 body %s; want code bad_request (or on /mcp a JSON-RPC error)", body)
	}
	if !strings.Contains(msg, "Transfer-Encoding") && !strings.Contains(msg, "LF") &&
		!strings.Contains(msg, "fold") && !strings.Contains(msg, "malformed") {
		t.Errorf("400 message %q does not say what was wrong", msg)
	}
}

// TestFramingCleanKeepsConnection: clean chunked and Content-Length
// requests, pipelined on one connection, are all answered and the
// connection stays open for the next.
func TestFramingCleanKeepsConnection(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t)})
	host := strings.TrimPrefix(base, "http://")
	h := "HTTP/1.1\r\nHost: " + host + "\r\n"
	pipeline := []struct {
		req    string
		status int
		body   string
	}{
		{"PUT /v1/blobs/a " + h + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 201, ""},
		{"PUT /v1/blobs/b " + h + "transfer-encoding:chunked\r\nX-Pad: a\tb\r\n\r\n3\r\nwor\r\n2\r\nld\r\n0\r\n\r\n", 201, ""},
		{"PUT /v1/blobs/c " + h + "Content-Length: 3\r\n\r\nabc", 201, ""},
		{"GET /v1/blobs/b " + h + "\r\n", 200, "world"},
		{"GET /healthz " + h + "\r\n", 200, "ok\n"},
	}
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var all strings.Builder
	for _, p := range pipeline {
		all.WriteString(p.req)
	}
	if _, err := io.WriteString(conn, all.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for _, p := range pipeline {
		readAnswer(t, br, strings.SplitN(p.req, "\r\n", 2)[0], p.status, p.body)
	}
	if _, err := io.WriteString(conn, "GET /healthz "+h+"\r\n"); err != nil {
		t.Fatalf("the connection closed after clean requests: %v", err)
	}
	readAnswer(t, br, "GET /healthz after the pipeline", 200, "ok\n")
}

// readAnswer reads one response from br and checks its status, body (when
// body is not empty) and that it keeps the connection.
func readAnswer(t *testing.T, br *bufio.Reader, what string, status int, body string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || body != "" && string(b) != body {
		t.Errorf("%s: %d %.200q; want %d %q", what, resp.StatusCode, b, status, body)
	}
	if resp.Close {
		t.Errorf("%s: the answer closes the connection", what)
	}
}
