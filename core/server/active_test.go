package server

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/token"
)

// activeTypes are media types a browser runs script in, or renders active
// content from; inertTypes are shown without either.
var (
	activeTypes = []string{"text/html", "text/html; charset=utf-8", "TEXT/HTML", "application/xhtml+xml", "image/svg+xml",
		"text/xml", "application/xml", "application/rss+xml", "text/javascript", "application/javascript",
		"application/json", "application/pdf", "application/octet-stream", "application/x-unknown", "text/css",
		"multipart/x-mixed-replace; boundary=x", "video/x+xml"}
	inertTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "text/plain", "text/plain; charset=utf-8",
		"audio/mpeg", "video/mp4"}
)

// checkSafeHeaders checks the headers of a response carrying stored bytes
// of media type mt (docs/security.md): nosniff always; for an active type an
// attachment and the sandboxing CSP.
func checkSafeHeaders(t *testing.T, what, mt string, r httpResp, attachment bool) {
	t.Helper()
	h := r.header
	active := !slices.Contains(inertTypes, mt)
	if h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s (%s): no X-Content-Type-Options: nosniff: %d %v", what, mt, r.status, h)
	}
	csp := h.Get("Content-Security-Policy")
	cd := h.Get("Content-Disposition")
	switch {
	case active && csp != "sandbox; default-src 'none'":
		t.Errorf("%s (%s): Content-Security-Policy %q", what, mt, csp)
	case active && !strings.HasPrefix(cd, "attachment"):
		t.Errorf("%s (%s): Content-Disposition %q, want an attachment", what, mt, cd)
	case !active && csp != "":
		t.Errorf("%s (%s): an inert type got Content-Security-Policy %q", what, mt, csp)
	case !active && attachment != strings.HasPrefix(cd, "attachment"):
		t.Errorf("%s (%s): Content-Disposition %q", what, mt, cd)
	}
}

// TestStoredContentHeaders stores each type through PUT /v1/blobs and
// fetches it back through every surface that serves stored bytes: GET and
// HEAD /v1/blobs, a /d link, resources/stream direct in both eras; and the
// 302 and downloadUrl answers of resources/stream carry nosniff too.
func TestStoredContentHeaders(t *testing.T) {
	parallel(t)
	const page = `<html><body><script>document.title="pwned"</script></body></html>`
	for _, mode := range []string{blobs.StreamDirect, blobs.StreamURL} {
		c := newBPClient(t, Options{Backend: newLocalStore(t), Blobs: blobs.Options{StreamMode: mode}})
		for i, mt := range append(append([]string{}, activeTypes...), inertTypes...) {
			key := "t/" + string(rune('a'+i)) + "/page"
			if r := c.put(key, []byte(page), map[string]string{"Content-Type": mt}); r.status != 201 {
				t.Fatalf("PUT %s: %d %s", mt, r.status, r.body)
			}
			for _, m := range []string{"GET", "HEAD"} {
				checkSafeHeaders(t, mode+" "+m+" /v1/blobs", mt, c.do(m, "/v1/blobs/"+key, nil, nil), false)
				checkSafeHeaders(t, mode+" "+m+" /d", mt, c.do(m, c.link(key, ""), nil, nil), true)
			}
			checkSafeHeaders(t, mode+" ranged GET /v1/blobs", mt, c.do("GET", "/v1/blobs/"+key, nil, map[string]string{"Range": "bytes=0-9"}), false)
			for _, era := range []string{legacyVersion, modernVersion} {
				r := c.client(era, streamCaps).streamResource(blobs.URI(key))
				if r.header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s resources/stream (%s): no nosniff: %v", mode, era, r.header)
				}
				if mode == blobs.StreamDirect {
					checkSafeHeaders(t, "resources/stream direct", mt, r.httpResp, true)
					continue
				}
				var res struct{ Result struct{ DownloadURL string } }
				if json.Unmarshal(r.body, &res) != nil || res.Result.DownloadURL == "" {
					t.Fatalf("resources/stream url mode: %d %s", r.status, r.body)
				}
				checkSafeHeaders(t, "downloadUrl", mt, c.do("GET", res.Result.DownloadURL, nil, nil), true)
			}
		}
	}
}

// TestStoredContentRedirect: on S3 the 302 answers (resources/stream
// redirect mode, /d with DownloadRedirect) carry nosniff, and the
// presigned GET they point at serves an active type as an attachment.
func TestStoredContentRedirect(t *testing.T) {
	parallel(t)
	be := byteplaneBackends()[1]
	c := newBPClient(t, Options{Backend: be.new(t), Blobs: blobs.Options{StreamMode: blobs.StreamRedirect}, Service: blobsvc.Options{DownloadRedirect: true}})
	if r := c.put("x/page.html", []byte("<script>1</script>"), map[string]string{"Content-Type": "text/html"}); r.status != 201 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	for what, r := range map[string]httpResp{
		"resources/stream": c.client(legacyVersion, streamCaps).streamResource("blob:///x/page.html").httpResp,
		"/d":               c.do("GET", c.link("x/page.html", ""), nil, nil),
	} {
		loc, err := url.Parse(r.header.Get("Location"))
		if r.status != 302 || err != nil || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: %d %v", what, r.status, r.header)
		}
		got := c.do("GET", loc.String(), nil, nil)
		if got.status != 200 || !strings.HasPrefix(got.header.Get("Content-Disposition"), "attachment") {
			t.Errorf("%s: presigned GET %d %v", what, got.status, got.header)
		}
	}
}

// TestUploadedActiveContent: an HTML or SVG data URI stored by the MCP
// upload_file tool is served back with the same headers as one PUT
// through /v1.
func TestUploadedActiveContent(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{Backend: newLocalStore(t)})
	s := c.client(legacyVersion, streamCaps)
	for key, uri := range map[string]string{
		"u/page.html": "data:text/html;base64,PHNjcmlwdD5kb2N1bWVudC50aXRsZT0icHduZWQiPC9zY3JpcHQ+",
		"u/img.svg":   "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E%3C%2Fsvg%3E",
	} {
		r := s.callTool("upload_file", `{"key":`+jsonString(key)+`,"file":`+jsonString(uri)+`}`)
		res := r.tool()
		if res.IsError {
			t.Fatalf("upload_file %s: %s", key, r.body)
		}
		mt := res.StructuredContent.MimeType
		checkSafeHeaders(t, "upload_file then GET /v1/blobs", mt, c.do("GET", "/v1/blobs/"+key, nil, nil), false)
		checkSafeHeaders(t, "upload_file then /d", mt, c.do("GET", c.link(key, ""), nil, nil), true)
		checkSafeHeaders(t, "upload_file then resources/stream", mt, s.streamResource(blobs.URI(key)).httpResp, true)
	}
}

// TestUploadAcceptTogether is the stored-content rule's upload case on /u: with
// accept [".pdf"], a part named x.pdf declared text/html, one named y.html
// declared text/html, and one named x.pdf declared
// application/octet-stream holding HTML are refused with 415 and nothing
// is stored; a real PDF passes.
func TestUploadAcceptTogether(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st})
	for _, tc := range []struct {
		name, ctype, data string
		status            int
	}{
		{"x.pdf", "text/html", "<html><script>fetch('/v1/blobs')</script></html>", 415},
		{"y.html", "text/html", "<html><script>fetch('/v1/blobs')</script></html>", 415},
		{"x.pdf", "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>", 415},
		{"x.pdf", "application/octet-stream", "<!DOCTYPE html><script>fetch('/v1/blobs')</script>", 415},
		{"x.pdf", "application/pdf", "%PDF-1.7\n%tiny", 201},
	} {
		m, err := srv.opts.Keyring.MintUpload(base, token.Upload{MaxSize: 1 << 20, Accept: []string{".pdf"}})
		if err != nil {
			t.Fatal(err)
		}
		ctype, body := multipartBody(t, [3]string{tc.name, tc.ctype, tc.data})
		r := doUpload(t, "POST", m.URL, ctype, body, nil)
		if r.Status != tc.status || tc.status == 201 && r.Blob.MimeType != "application/pdf" {
			t.Errorf("%s as %s: %d %+v, want %d", tc.name, tc.ctype, r.Status, r, tc.status)
		}
		if tc.status != 201 && len(listAll(t, st)) != 0 {
			t.Errorf("%s as %s: refused but stored %v", tc.name, tc.ctype, listAll(t, st))
		}
	}
}
