package server

// Bad arguments on the control API, the upload endpoints and HTTP itself:
// each bad argument gets a 4xx with the JSON error body naming it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/storage"
)

// argsServer starts a server on a fresh store of backend tb, logging into
// the returned buffer.
func argsServer(t *testing.T, tb testBackend) (*bpClient, storage.Backend, *logBuffer) {
	logs := &logBuffer{}
	be := tb.new(t)
	c := newBPClient(t, Options{Backend: be, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return c, be, logs
}

func noBugLogs(t *testing.T, logs *logBuffer) {
	t.Helper()
	if s := logs.String(); strings.Contains(s, "bug:") || strings.Contains(s, "level=ERROR") {
		t.Errorf("the server logged a bug or an error:\n%s", s)
	}
}

// apiError decodes {"error":{"code","message"}}.
func apiErrorOf(t *testing.T, r httpResp) (code, msg string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %d %q: %v", r.status, r.body, err)
	}
	return e.Error.Code, e.Error.Message
}

// wantAPIError checks status, code and that the message has every one of parts.
func wantAPIError(t *testing.T, what string, r httpResp, status int, code string, parts ...string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: %d %.300s, want %d %s", what, r.status, r.body, status, code)
		return
	}
	gotCode, msg := apiErrorOf(t, r)
	if gotCode != code {
		t.Errorf("%s: code %q (%s), want %q", what, gotCode, msg, code)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s: %q does not say %q", what, msg, p)
		}
	}
}

// TestArgsPathConflict: PUT /v1/blobs/x while x/y exists, or a/b while a
// exists, answers 409 path_conflict naming what is in the way, on both
// backends (bd4921f answered 412 exists, though GET x is 404); an upload
// endpoint minted for such a key answers the same.
func TestArgsPathConflict(t *testing.T) {
	parallel(t)
	for _, tb := range byteplaneBackends() {
		t.Run(tb.name, func(t *testing.T) {
			t.Parallel()
			c, _, logs := argsServer(t, tb)
			for _, k := range []string{"a", "x/y"} {
				if r := c.put(k, []byte(k), nil); r.status != 201 {
					t.Fatalf("PUT %s: %d %s", k, r.status, r.body)
				}
			}
			wantAPIError(t, "PUT x over x/y", c.put("x", []byte("x"), nil), 409, "path_conflict", `"x/"`)
			wantAPIError(t, "PUT a/b over a", c.put("a/b", []byte("b"), nil), 409, "path_conflict", `"a"`)
			wantAPIError(t, "PUT a/b/c over a", c.put("a/b/c", []byte("c"), nil), 409, "path_conflict", `"a"`)
			if r := c.do("GET", "/v1/blobs/x", nil, nil); r.status != 404 {
				t.Errorf("GET x: %d", r.status)
			}
			r := c.do("POST", "/v1/uploads", strings.NewReader(`{"key":"a/b"}`), nil)
			var up struct{ URL string }
			if err := json.Unmarshal(r.body, &up); r.status != 201 || err != nil {
				t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
			}
			wantAPIError(t, "/u PUT to a/b", c.do("PUT", up.URL, strings.NewReader("b"), nil), 409, "path_conflict", `"a"`)
			noBugLogs(t, logs)
		})
	}
}

// TestArgsControlJSON: POST /v1/links and /v1/uploads refuse ttlSeconds and
// maxSize outside their range, of the wrong kind or beyond any integer type
// with 400 naming the field and the range (bd4921f let 9300000000 and
// 1000000000000000000 overflow into the default lifetime), and unknown
// fields with 400 naming the field.
func TestArgsControlJSON(t *testing.T) {
	parallel(t)
	c, _, logs := argsServer(t, byteplaneBackends()[0])
	c.put("k", []byte("k"), nil)
	for _, v := range []string{"9300000000", "1000000000000000000", "1e18", "99999999999999999999", "-5", "1.5", `"60"`, "604801"} {
		for _, path := range []string{"/v1/links", "/v1/uploads"} {
			r := c.do("POST", path, strings.NewReader(`{"key":"k","ttlSeconds":`+v+`}`), nil)
			wantAPIError(t, path+" ttlSeconds "+v, r, 400, "bad_request", "ttlSeconds", "[1, 604800]")
		}
	}
	for _, v := range []string{"9300000000000", "1e30", "99999999999999999999", "-5", "1.5", `"60"`, "true"} {
		r := c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":`+v+`}`), nil)
		wantAPIError(t, "/v1/uploads maxSize "+v, r, 400, "bad_request", "maxSize", "[1, 5368709120]")
	}
	if r := c.do("POST", "/v1/links", strings.NewReader(`{"key":"k","ttlSeconds":6e1}`), nil); r.status != 201 {
		t.Errorf("ttlSeconds 6e1 (an integer): %d %s", r.status, r.body)
	}
	for _, path := range []string{"/v1/links", "/v1/uploads"} {
		wantAPIError(t, path+" unknown field", c.do("POST", path, strings.NewReader(`{"key":"k","bogus":1}`), nil),
			400, "bad_request", `unknown field "bogus"`)
		// null is not an empty object: /v1/uploads would mint an endpoint.
		wantAPIError(t, path+" null", c.do("POST", path, strings.NewReader(` null`), nil),
			400, "bad_request", "must be a JSON object")
	}
	wantAPIError(t, "/v1/links key twice", c.do("POST", "/v1/links", strings.NewReader(`{"key":"k","key":"j"}`), nil),
		400, "bad_request", `"key"`, "more than once")
	noBugLogs(t, logs)
}

// badFilenames break the filename rules: control characters (CR, LF, NUL,
// C1) or more than 255 bytes. bd4921f stored and echoed them, and minted
// links for 60 KB names that always answered 431.
var badFilenames = []string{"a\r\nb.txt", "nul\x00.txt", "c1\u0085", strings.Repeat("f", 256), strings.Repeat("f", 60_000)}

// TestArgsFilenamesAPI: every surface that takes a filename refuses a bad
// one with 400 invalid_filename and stores or mints nothing: POST /v1/links,
// PUT /v1/blobs (Content-Disposition), PUT and multipart POST to /u.
func TestArgsFilenamesAPI(t *testing.T) {
	parallel(t)
	c, be, logs := argsServer(t, byteplaneBackends()[0])
	c.put("k", []byte("k"), nil)
	for i, name := range badFilenames {
		what := fmt.Sprintf("filename %d (%.10q)", i, name)
		wantAPIError(t, "/v1/links "+what, c.do("POST", "/v1/links", strings.NewReader(`{"key":"k","filename":`+jsonString(name)+`}`), nil),
			400, "invalid_filename", "filename")
		// A 60 KB name does not fit in a request header (16 KiB): 431.
		cd := "attachment; filename*=UTF-8''" + urlEscape(name)
		if len(cd) < 8<<10 {
			wantAPIError(t, "PUT /v1/blobs "+what, c.put("p", []byte("p"), map[string]string{"Content-Disposition": cd}),
				400, "invalid_filename", "filename")
		}
		var up struct{ URL string }
		r := c.do("POST", "/v1/uploads", strings.NewReader(`{}`), nil)
		if err := json.Unmarshal(r.body, &up); err != nil || r.status != 201 {
			t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
		}
		if len(cd) < 8<<10 {
			wantAPIError(t, "/u PUT "+what, c.do("PUT", up.URL, strings.NewReader("u"), map[string]string{"Content-Disposition": cd}),
				400, "invalid_filename", "filename")
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename*=UTF-8''`+urlEscape(name))
		pw, _ := mw.CreatePart(h)
		pw.Write([]byte("m"))
		mw.Close()
		wantAPIError(t, "/u multipart "+what, c.do("POST", up.URL, &buf, map[string]string{"Content-Type": mw.FormDataContentType()}),
			400, "invalid_filename", "filename")
	}
	if _, err := be.Stat(t.Context(), "p"); err == nil {
		t.Error("PUT with a bad filename stored p")
	}
	if page, _ := be.List(t.Context(), "uploads/", "", 10); len(page.Items) > 0 {
		t.Errorf("uploads with bad filenames stored %d objects", len(page.Items))
	}
	noBugLogs(t, logs)
}

// urlEscape percent-encodes every byte outside [A-Za-z0-9._-] (RFC 8187).
func urlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// expectResponse sends a request head with "Expect: 100-continue" and no
// body, and returns the first response: 100 Continue, or the final answer
// when the server refuses without reading the body.
func expectResponse(t *testing.T, base, head string) (*http.Response, []byte, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(head + "Host: " + strings.TrimPrefix(base, "http://") + "\r\nExpect: 100-continue\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	var body bytes.Buffer
	if resp.StatusCode != http.StatusContinue {
		body.ReadFrom(resp.Body)
	}
	return resp, body.Bytes(), conn, br
}

// TestArgsExpectContinue: a request with "Expect: 100-continue" gets "100
// Continue" only once authentication, route and declared size pass;
// otherwise the final status (401, 404, 413, 403…) with its JSON error body
// comes at once and the body is never read. bd4921f sent 100 Continue
// first, inviting the client to send a body that was then refused.
func TestArgsExpectContinue(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t), Auth: Auth{Keys: []string{HashKey("secret") + " alice"}}, Service: blobsvc.Options{MaxUploadBytes: 1000}})
	c := &bpClient{t: t, base: base, hc: &http.Client{Timeout: 30 * time.Second}}
	auth := "Authorization: Bearer secret\r\n"
	r := c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":10}`), map[string]string{"Authorization": "Bearer secret"})
	var up struct{ URL string }
	if err := json.Unmarshal(r.body, &up); err != nil || r.status != 201 {
		t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
	}
	upath := up.URL[strings.Index(up.URL, "/u/"):]
	for _, tc := range []struct {
		head   string
		status int
		code   string
	}{
		{"PUT /v1/blobs/k HTTP/1.1\r\nContent-Length: 5\r\n", 401, "unauthorized"},
		{"PUT /v1/blobs/k HTTP/1.1\r\n" + auth + "Content-Length: 5000\r\n", 413, "too_large"},
		{"PUT /v1/blobs/a/../b HTTP/1.1\r\n" + auth + "Content-Length: 5\r\n", 400, "invalid_key"},
		{"PUT /v1/nothing HTTP/1.1\r\n" + auth + "Content-Length: 5\r\n", 404, "not_found"},
		{"PATCH /v1/blobs/k HTTP/1.1\r\n" + auth + "Content-Length: 5\r\n", 405, "method_not_allowed"},
		{"POST /v1/links HTTP/1.1\r\n" + auth + "Content-Length: 100000\r\n", 413, "too_large"},
		{"POST /u/forged HTTP/1.1\r\nContent-Length: 5\r\n", 403, "invalid_token"},
		{"PUT " + upath + " HTTP/1.1\r\nContent-Length: 1000000\r\n", 413, "too_large"},
		{"POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\n", 401, ""},
		{"POST /nowhere HTTP/1.1\r\nContent-Length: 5\r\n", 404, ""},
		{"GET /d/anything HTTP/1.1\r\nContent-Length: 1073741824\r\n", 400, "unexpected_body"},
		{"POST /healthz HTTP/1.1\r\nContent-Length: 5\r\n", 400, "unexpected_body"},
	} {
		resp, body, _, _ := expectResponse(t, base, tc.head)
		line := strings.SplitN(tc.head, "\r\n", 2)[0]
		if resp.StatusCode != tc.status {
			t.Errorf("%s: first answer %d, want %d without 100 Continue", line, resp.StatusCode, tc.status)
			continue
		}
		if tc.code != "" {
			wantAPIError(t, line, httpResp{status: resp.StatusCode, body: body}, tc.status, tc.code)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: the refusal has no X-Content-Type-Options: nosniff", line)
		}
	}
	resp, _, conn, br := expectResponse(t, base, "PUT /v1/blobs/k HTTP/1.1\r\n"+auth+"Content-Length: 5\r\n")
	if resp.StatusCode != http.StatusContinue {
		t.Fatalf("an acceptable PUT: first answer %d, want 100", resp.StatusCode)
	}
	conn.Write([]byte("hello"))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 201 {
		t.Errorf("PUT after 100 Continue: %v %v", resp, err)
	}
}
