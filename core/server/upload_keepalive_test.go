package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
)

// TestUploadChunkedKeepAlive sends a chunked multipart upload and then a
// second request on the same connection: the server must consume the body's
// last chunk before answering, or it parses those bytes as a new request and
// breaks the kept-alive connection.
func TestUploadChunkedKeepAlive(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st})
	m, err := srv.opts.Keyring.MintUpload(base, token.Upload{MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ct, body := multipartBody(t, [3]string{"a.txt", "text/plain", strings.Repeat("chunked ", 3000)})
	u, _ := url.Parse(m.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", u.Path, u.Host, ct)
	for len(body) > 0 {
		n := min(len(body), 4096)
		fmt.Fprintf(&req, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	req.WriteString("0\r\n\r\n")
	fmt.Fprintf(&req, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
	if _, err := conn.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	first, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("upload answered %d", first.StatusCode)
	}
	second, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("second request on the connection: %v", err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusOK {
		t.Fatalf("the request after a chunked upload got %d, want 200 from /healthz", second.StatusCode)
	}
}
