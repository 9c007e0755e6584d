package server

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tus on the upload endpoints (/u/{token}/tus/, package blobsvc/linktus):
// a request_upload in SEP-1306 binary mode answered through a resumed
// upload, the token's one-upload rule, and the refusals.

// linkTus is a tus client of one upload endpoint (an absolute /u URL).
type linkTus struct {
	*tusClient
	endpoint string // http://host/u/{token}
}

func newLinkTus(t *testing.T, endpoint string) linkTus {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &tusClient{t: t, base: u.Scheme + "://" + u.Host, hc: &http.Client{Timeout: 60 * time.Second}}
	return linkTus{tusClient: c, endpoint: u.Path}
}

// createFile starts the token's upload of length bytes named filename;
// it returns the response and the upload's path ("" when refused).
func (c linkTus) createFile(length int, filename, filetype string) (*http.Response, string) {
	c.t.Helper()
	r := c.do("POST", c.endpoint+"/tus/", nil, map[string]string{"Upload-Length": strconv.Itoa(length),
		"Upload-Metadata": tusMeta("filename", filename, "filetype", filetype)})
	if r.StatusCode != 201 {
		return r, ""
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		c.t.Fatal(err)
	}
	return r, loc.Path
}

func TestUploadTusElicitation(t *testing.T) {
	parallel(t)
	c := serveMCP(t, Options{Backend: newLocalStore(t)}, legacyVersion, `{"elicitation":{"form":{},"binary":{"maxFileSize":104857600}}}`)
	events, req, p := startElicitation(t, c, `"accept":["text/*"],"maxSize":8388608`)
	ep := p.UploadEndpoints["file"]
	lc := newLinkTus(t, ep.URL)
	if r := lc.do("OPTIONS", lc.endpoint+"/tus/", nil, nil); r.StatusCode != 204 || r.Header.Get("Tus-Max-Size") != "8388608" ||
		!strings.Contains(r.Header.Get("Tus-Extension"), "creation") || strings.Contains(r.Header.Get("Tus-Extension"), "concatenation") {
		t.Fatalf("OPTIONS: %d %v", r.StatusCode, r.Header)
	}
	data := []byte(strings.Repeat("resumable upload through a link\n", 20_000)) // 640 KB
	r, path := lc.createFile(len(data), "notes.txt", "text/plain")
	if path == "" || !strings.HasPrefix(path, lc.endpoint+"/tus/") {
		t.Fatalf("create: %d %v", r.StatusCode, r.Header)
	}

	// A second upload with the token, of either kind, is refused.
	if r, _ := lc.createFile(10, "again.txt", "text/plain"); r.StatusCode != 409 {
		t.Fatalf("second creation: %d, want 409", r.StatusCode)
	}
	if r := doUpload(t, "PUT", ep.URL, "text/plain", []byte("whole"), nil); r.Status != 409 {
		t.Fatalf("whole-body upload after the tus creation: %+v, want 409", r)
	}

	// A PATCH cut mid-body keeps what arrived; HEAD says where to resume.
	const sent = 200_003
	cutPatch(t, lc.base, path, 0, len(data), data[:sent])
	eventually(t, 30*time.Second, func() bool { return lc.offset(path) == sent })
	if r := lc.patch(path, sent-3, data[sent-3:], nil); r.StatusCode != 409 {
		t.Fatalf("PATCH at a wrong offset: %d, want 409", r.StatusCode)
	}

	// Another token's endpoint does not reach this upload.
	_, req2, p2 := startElicitation(t, c, ``)
	defer answer(t, c, req2.ID, `{"action":"decline"}`)
	other := strings.Replace(path, lc.endpoint, mustPath(t, p2.UploadEndpoints["file"].URL), 1)
	if r := lc.do("HEAD", other, nil, nil); r.StatusCode != 404 {
		t.Fatalf("HEAD under another token: %d, want 404", r.StatusCode)
	}
	if r := lc.patch(other, sent, data[sent:], nil); r.StatusCode != 404 {
		t.Fatalf("PATCH under another token: %d, want 404", r.StatusCode)
	}

	if r := lc.patch(path, sent, data[sent:], nil); r.StatusCode != 204 || r.Header.Get("Upload-Offset") != strconv.Itoa(len(data)) {
		t.Fatalf("resumed PATCH: %d %v", r.StatusCode, r.Header)
	}
	answer(t, c, req.ID, `{"action":"accept","content":{"file":{"name":"notes.txt","size":`+itoa(len(data))+`,"mimeType":"text/plain","uploadId":"`+ep.UploadID+`"}}}`)
	res, _ := events.toolResult()
	if res.IsError || res.StructuredContent.SHA256 != hexSum(data) || res.StructuredContent.Key != "uploads/"+ep.UploadID+"/notes.txt" {
		t.Fatalf("result %+v", res)
	}
	if r, _ := lc.createFile(10, "after.txt", "text/plain"); r.StatusCode != 409 {
		t.Fatalf("creation after completion: %d, want 409", r.StatusCode)
	}
}

// TestUploadTusRefusals: the token's limits apply at creation and at
// completion; a refused completion frees the link for another try, a
// termination does not.
func TestUploadTusRefusals(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{"elicitation":{"form":{},"binary":{"maxFileSize":104857600}}}`)
	_, req, p := startElicitation(t, c, `"accept":["image/png"],"maxSize":1000`)
	defer answer(t, c, req.ID, `{"action":"decline"}`)
	lc := newLinkTus(t, p.UploadEndpoints["file"].URL)
	if r, _ := lc.createFile(1001, "big.png", "image/png"); r.StatusCode != 413 {
		t.Fatalf("over maxSize: %d, want 413", r.StatusCode)
	}
	r := lc.do("POST", lc.endpoint+"/tus/", nil, map[string]string{"Upload-Concat": "partial", "Upload-Length": "10"})
	if r.StatusCode != 400 || !strings.Contains(readAll(r), "concatenation_unsupported") {
		t.Fatalf("Upload-Concat: %d", r.StatusCode)
	}
	for _, p := range []string{"/tus/nope", "/other"} {
		if r := lc.do("HEAD", lc.endpoint+p, nil, nil); r.StatusCode != 404 {
			t.Fatalf("HEAD %s: %d, want 404", p, r.StatusCode)
		}
	}
	for _, m := range []string{"GET", "POST", "PUT"} { // the /u surface's JSON error body, not a bare "not found"
		if r := lc.do(m, lc.endpoint+"/extra", nil, nil); r.StatusCode != 404 || !strings.Contains(readAll(r), `"code":"not_found"`) {
			t.Fatalf("%s /u/{token}/extra: %d %q, want 404 with the JSON error body", m, r.StatusCode, readAll(r))
		}
	}
	if r := lc.do("HEAD", "/u/not-a-token/tus/", nil, nil); r.StatusCode != 403 {
		t.Fatalf("a forged token: %d, want 403", r.StatusCode)
	}
	_, path := lc.createFile(11, "text.png", "image/png")
	if path == "" {
		t.Fatal("creation refused")
	}
	if r := lc.patch(path, 0, []byte("plain text."), nil); r.StatusCode != 415 || !strings.Contains(readAll(r), "type_mismatch") {
		t.Fatalf("text as image/png: %d, want 415 type_mismatch", r.StatusCode)
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	_, path = lc.createFile(len(png), "real.png", "image/png")
	if path == "" {
		t.Fatal("creation after a refused completion refused")
	}
	if r := lc.patch(path, 0, png, nil); r.StatusCode != 204 {
		t.Fatalf("PATCH: %d %s", r.StatusCode, readAll(r))
	}
	if r := lc.do("DELETE", path, nil, nil); r.StatusCode != 204 {
		t.Fatalf("DELETE: %d", r.StatusCode)
	}
	if r, _ := lc.createFile(len(png), "other.png", "image/png"); r.StatusCode != 409 {
		t.Fatalf("creation after a termination: %d, want 409", r.StatusCode)
	}
	if keys := storedUnder(t, st, "uploads/"+p.UploadEndpoints["file"].UploadID+"/"); len(keys) != 1 || !strings.HasSuffix(keys[0], "/real.png") {
		t.Fatalf("stored under the token: %v, want real.png alone", keys)
	}
}

func mustPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

func readAll(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
