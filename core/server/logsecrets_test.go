package server

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// Secrets in logs (hardening item 6): a server with known secrets gets a
// hostile batch of requests while logging at debug level, and the captured
// log must contain none of them.

// rawExchange writes req on a fresh connection and returns what came back
// before the server closed it or a short deadline passed.
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.WriteString(c, req)
	_ = c.(*net.TCPConn).CloseWrite() // the server sees the end at once
	b, _ := io.ReadAll(c)
	return string(b)
}

// logSecrets is what must never reach a log line.
type logSecrets struct {
	key, wrongKey string
	uploadURL     string // /u/{token}
	linkURL       string // /d/{token}
	session       string // Mcp-Session-Id
	payload       string // a data URI payload
}

// needles are the strings searched for in the log: each secret, and the
// signature part of each token.
func (s logSecrets) needles() map[string]string {
	n := map[string]string{"api key": s.key, "api key (middle)": s.key[10:30], "wrong key": s.wrongKey,
		"data URI payload": s.payload[:40]}
	for name, tok := range map[string]string{"upload token": tokenOf(s.uploadURL), "download token": tokenOf(s.linkURL),
		"session id": s.session} {
		n[name] = tok
		if i := strings.LastIndexByte(tok, '.'); i >= 0 {
			n[name+" signature"] = tok[i+1:]
		}
	}
	return n
}

func tokenOf(u string) string { return u[strings.LastIndexByte(u, '/')+1:] }

// hostileRequests are raw HTTP requests built around the secrets: malformed
// headers, bad lengths, bad tokens, data URIs in broken JSON.
func hostileRequests(s logSecrets, host string) []string {
	up, link := tokenOf(s.uploadURL), tokenOf(s.linkURL)
	auth := "Authorization: Bearer " + s.key + "\r\n"
	bad := func(tok string) string { return tok[:len(tok)-3] + "AAA" }
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k","file":"data:text/plain;base64,` + s.payload
	h := "Host: " + host + "\r\n"
	return []string{
		"POST /mcp HTTP/1.1\r\n" + h + auth + "Mcp-Session-Id: " + s.session + "\r\nContent-Length: -1\r\n\r\n" + rpc,
		"POST /u/" + up + " HTTP/1.1\r\n" + h + auth + "Content-Length: -1\r\n\r\nxx",
		"PUT /v1/blobs/a HTTP/1.1\r\n" + h + auth + "Content-Length: -1\r\n\r\n",
		"GET /d/" + link + " HTTP/1.1\r\n" + h + auth + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
		"GET /d/" + link + " HTTP/1.1\r\n" + h + auth + "Broken header line\r\n\r\n",
		"GET /u/" + up + " HTTP/9.9 junk\r\n" + h + auth + "\r\n",
		"GET /upload/" + up + " HTTP/1.1\r\n" + h + auth + "X-Nul: a\x00b\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + auth + "X-Big: " + strings.Repeat("x", 20<<10) + "\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + auth + "Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n" + rpc,
		"POST /mcp HTTP/1.1\r\n" + h + auth + "Transfer-Encoding: gzip, chunked, identity\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.1\r\n" + h + auth + "Mcp-Session-Id: " + s.session + "\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n" + rpc,
		"POST /mcp HTTP/1.1\r\n" + h + auth + "Mcp-Session-Id: " + s.session + "\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(rpc)+9) + "\r\n\r\n" + rpc + `"}}}}}}}}`,
		"POST /mcp HTTP/1.1\r\n" + h + auth + "Mcp-Session-Id: " + bad(s.session) + "\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(rpc)+5) + "\r\n\r\n" + rpc + `!!"}}`,
		"POST /u/" + bad(up) + " HTTP/1.1\r\n" + h + "Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc",
		"GET /d/" + bad(link) + " HTTP/1.1\r\n" + h + "\r\n",
		"GET /v1/blobs HTTP/1.1\r\n" + h + "Authorization: Bearer " + s.wrongKey + "\r\n\r\n",
		"GET /d/" + link + "?x=" + s.key + " HTTP/1.1\r\n" + h + "Range: bytes=zz\r\n\r\n",
		"PUT /u/" + up + " HTTP/1.1\r\n" + h + "Content-Type: text/plain\r\nContent-Length: 100\r\n\r\nshort",
		// fasthttp quotes the offending line or value in these errors.
		"GET /d/" + link + " HTTP/1.1\r\n" + h + "Authorization Bearer " + s.key + "\r\n\r\n",
		"GET /u/" + up + " HTTP/1.1 " + up + "\r\n" + h + "\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "X-Nul: " + s.session + "\x00\r\n\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "Authorization: Bearer " + s.key + "\x00\r\n\r\n",
		"GET /mcp HTTP/1.1\r\n" + h + "X-Data: data:text/plain;base64," + s.payload + "\x01\r\n\r\n",
		"POST /v1/links HTTP/1.1\r\n" + h + auth + "Content-Type: application/json\r\nContent-Length: 30\r\n\r\n{\"key\":\"data:x;base64," + s.payload[:6],
	}
}

// mintLogSecrets creates the secrets of one run on a started server: an
// upload endpoint, a download link and a session.
func mintLogSecrets(t *testing.T, c *bpClient, key string) logSecrets {
	t.Helper()
	s := logSecrets{key: key, wrongKey: "mcpb_" + base64.RawURLEncoding.EncodeToString(randomBytes(32)),
		payload: base64.StdEncoding.EncodeToString([]byte("PAYLOAD-" + rand.Text() + rand.Text() + rand.Text()))}
	auth := map[string]string{"Authorization": "Bearer " + key}
	if r := c.do("PUT", "/v1/blobs/docs/a.txt", strings.NewReader("hello"), auth); r.status != 201 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	r := c.do("POST", "/v1/links", strings.NewReader(`{"key":"docs/a.txt","ttlSeconds":600}`), auth)
	var link struct{ URL string }
	if json.Unmarshal(r.body, &link); link.URL == "" {
		t.Fatalf("POST /v1/links: %d %s", r.status, r.body)
	}
	r = c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":1000,"ttlSeconds":600}`), auth)
	var up struct{ URL string }
	if json.Unmarshal(r.body, &up); up.URL == "" {
		t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
	}
	s.linkURL, s.uploadURL = link.URL, up.URL
	r = c.do("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`),
		map[string]string{"Content-Type": "application/json", "Accept": "application/json", "Authorization": "Bearer " + key})
	if s.session = r.header.Get("Mcp-Session-Id"); s.session == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	return s
}

// honestTraffic uses every secret the way a client does (so the debug
// access log sees each path), including a bad data URI the server rejects.
func honestTraffic(t *testing.T, c *bpClient, s logSecrets) {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + s.key}
	c.do("GET", s.linkURL, nil, nil)
	c.do("GET", strings.Replace(s.uploadURL, "/u/", "/upload/", 1), nil, nil)
	c.do("PUT", s.uploadURL, strings.NewReader("hello"), map[string]string{"Content-Type": "text/plain"})
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json",
		"Mcp-Session-Id": s.session, "MCP-Protocol-Version": "2025-11-25", "Authorization": auth["Authorization"]}
	c.do("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k2","file":"data:image/png;base64,`+s.payload+`"}}}`), hdr)
	c.do("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"k3","file":"data:text/plain;base64,`+s.payload+`%%%"}}}`), hdr)
}

// checkLogClean fails for every needle found in the log.
func checkLogClean(t *testing.T, log string, needles map[string]string) {
	t.Helper()
	if !strings.Contains(log, "fasthttp") || !strings.Contains(log, "request_id") {
		t.Fatalf("the hostile run logged too little to be a test:\n%s", log)
	}
	for name, n := range needles {
		if n != "" && strings.Contains(log, n) {
			i := strings.Index(log, n)
			start := strings.LastIndexByte(log[:i], '\n') + 1
			end := i + strings.IndexByte(log[i:], '\n')
			t.Errorf("the log holds the %s:\n%s", name, log[start:max(end, i+len(n))])
		}
	}
}

// TestLogsHoldNoSecrets runs the hostile batch against a local-store
// server with API keys, logging at debug level in text and JSON, and greps
// the log for every secret.
func TestLogsHoldNoSecrets(t *testing.T) {
	parallel(t)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var logBuf logBuffer
			key := "mcpb_" + base64.RawURLEncoding.EncodeToString(randomBytes(32))
			c := newBPClient(t, Options{
				Backend: newLocalStore(t),
				Logger:  debugLogger(&logBuf, format),
				Auth:    Auth{Keys: []string{HashKey(key)}},
			})
			s := mintLogSecrets(t, c, key)
			honestTraffic(t, c, s)
			host := strings.TrimPrefix(c.base, "http://")
			for _, req := range hostileRequests(s, host) {
				rawExchange(t, host, req)
			}
			checkLogClean(t, logBuf.String(), s.needles())
		})
	}
}

func debugLogger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// TestLogsHoldNoPresignedQuery follows download links and resources/stream
// redirects to presigned S3 URLs (SeaweedFS) at debug level and greps the log for
// the signature and credential of each.
func TestLogsHoldNoPresignedQuery(t *testing.T) {
	parallel(t)
	srv := s3test.Shared(t)
	be, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey, Bucket: "logs" + strings.ToLower(rand.Text()[:12]), CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	var logBuf logBuffer
	key := "mcpb_" + base64.RawURLEncoding.EncodeToString(randomBytes(32))
	c := newBPClient(t, Options{
		Backend: storage.Backend(be),
		Logger:  debugLogger(&logBuf, "text"),
		Auth:    Auth{Keys: []string{HashKey(key)}},
		Service: blobsvc.Options{DownloadRedirect: true},
	})
	s := mintLogSecrets(t, c, key)
	needles := s.needles()
	r := c.do("GET", s.linkURL, nil, nil)
	loc, err := url.Parse(r.header.Get("Location"))
	if r.status != http.StatusFound || err != nil || loc.Query().Get("X-Amz-Signature") == "" {
		t.Fatalf("GET %s: want a 302 to a presigned URL, got %d %q", s.linkURL, r.status, r.header.Get("Location"))
	}
	needles["presigned signature"] = loc.Query().Get("X-Amz-Signature")
	needles["presigned credential"] = loc.Query().Get("X-Amz-Credential")
	needles["presigned query"] = loc.RawQuery[:40]
	// resources/stream in redirect mode (the S3 default) answers with a 302
	// to a presigned URL too.
	sid := newMCPClientWith(t, c.base, legacyVersion, streamCaps, map[string]string{"Authorization": "Bearer " + key}).sid
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25", "Authorization": "Bearer " + key}
	r = c.do("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"resources/stream","params":{"uri":"blob:///docs/a.txt"}}`), hdr)
	if loc, err := url.Parse(r.header.Get("Location")); r.status != http.StatusFound || err != nil || loc.Query().Get("X-Amz-Signature") == "" {
		t.Fatalf("resources/stream: want a 302 to a presigned URL, got %d %q %s", r.status, r.header.Get("Location"), r.body)
	} else {
		needles["stream presigned signature"] = loc.Query().Get("X-Amz-Signature")
	}
	honestTraffic(t, c, s)
	host := strings.TrimPrefix(c.base, "http://")
	for _, req := range hostileRequests(s, host) {
		rawExchange(t, host, req)
	}
	checkLogClean(t, logBuf.String(), needles)
}
