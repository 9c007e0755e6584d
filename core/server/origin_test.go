package server

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
)

// startOriginServer starts a server whose PublicURL is
// http://127.0.0.1:PORT and whose DownloadURL is http://localhost:PORT:
// two origins on one listener.
func startOriginServer(t *testing.T, opts Options) (c *bpClient, dl string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dl = "http://localhost:" + itoa(ln.Addr().(*net.TCPAddr).Port)
	opts.DownloadURL = dl + "/"
	if opts.Backend == nil {
		opts.Backend = newLocalStore(t)
	}
	base, s := startTestServerOn(t, opts, ln)
	return &bpClient{t: t, base: base, srv: s, hc: &http.Client{Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, dl
}

// TestDownloadOrigin: with a DownloadURL, every minted link (POST
// /v1/links, get_download_link, a resources/stream downloadUrl) is on the
// download origin and works there; /d on the service's origin is refused,
// and the download origin serves nothing but /d and the health probes.
func TestDownloadOrigin(t *testing.T) {
	parallel(t)
	c, dl := startOriginServer(t, Options{Blobs: blobs.Options{StreamMode: blobs.StreamURL}})
	data := []byte("<script>document.title='pwned'</script>")
	if r := c.put("o/page.html", data, map[string]string{"Content-Type": "text/html"}); r.status != 201 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	s := c.client(legacyVersion, streamCaps)
	var tool struct {
		Result struct{ StructuredContent struct{ URL string } }
	}
	json.Unmarshal(s.call("tools/call", `{"name":"get_download_link","arguments":{"key":"o/page.html"}}`).body, &tool)
	var stream struct{ Result struct{ DownloadURL string } }
	json.Unmarshal(s.streamResource("blob:///o/page.html").body, &stream)
	for what, link := range map[string]string{"POST /v1/links": c.link("o/page.html", ""),
		"get_download_link": tool.Result.StructuredContent.URL, "downloadUrl": stream.Result.DownloadURL} {
		if !strings.HasPrefix(link, dl+"/d/") {
			t.Fatalf("%s minted %q, want a link under %s/d/", what, link, dl)
		}
		if r := c.do("GET", link, nil, nil); r.status != 200 || string(r.body) != string(data) {
			t.Errorf("%s: GET on the download origin: %d %s", what, r.status, r.body)
		}
		onAPI := c.base + strings.TrimPrefix(link, dl)
		if r := c.do("GET", onAPI, nil, nil); r.status != 404 || errCode(t, r) != "not_found" || len(r.body) > 200 {
			t.Errorf("%s: GET on the service's origin: %d %s", what, r.status, r.body)
		}
	}
	for _, p := range []string{"/v1/blobs/o/page.html", "/mcp", "/u/x", "/upload/x", "/"} {
		if r := c.do("GET", dl+p, nil, nil); r.status != 404 {
			t.Errorf("GET %s on the download origin: %d %s", p, r.status, r.body)
		}
	}
	if r := c.do("GET", dl+"/healthz", nil, nil); r.status != 200 {
		t.Errorf("/healthz on the download origin: %d", r.status)
	}
}

func TestDownloadURLValidation(t *testing.T) {
	parallel(t)
	for _, tc := range []struct{ public, download string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:9090"},
		{"https://mcp.example.com", "https://MCP.example.com."},
		{"https://mcp.example.com", "ftp://dl.example.net"},
		{"https://mcp.example.com", "https://dl.example.net/files"},
		{"https://mcp.example.com", "dl.example.net"},
	} {
		if _, err := New(Options{Backend: newMemBackend(), PublicURL: tc.public, DownloadURL: tc.download}); err == nil {
			t.Errorf("New with PublicURL %q and DownloadURL %q: no error", tc.public, tc.download)
		}
	}
	if _, err := New(Options{Backend: newMemBackend(), PublicURL: "https://mcp.example.com", DownloadURL: "https://dl.example-content.net/"}); err != nil {
		t.Errorf("New with a valid DownloadURL: %v", err)
	}
}
