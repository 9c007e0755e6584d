package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// tusProxy stands in front of a test server for the browser tests of
// resumable uploads, as a real network would: it paces PATCH bodies to
// rate bytes per second, cuts the connection of the first PATCH after
// cutAt bytes (the browser sees a dropped connection), records each
// PATCH's Upload-Offset and answer and counts the PATCH bytes it
// forwarded. Paths in files it serves itself (a test page, a script).
// It closes every connection after its answer, so the cut PATCH is never
// on a reused connection.
type tusProxy struct {
	rate, cutAt int64
	files       map[string]string // path → file on disk

	mu        sync.Mutex
	patches   []proxiedPatch
	forwarded int64
}

// proxiedPatch is a PATCH through the proxy: its Upload-Offset and the
// status it was answered (0: none, the connection was cut or dropped).
type proxiedPatch struct {
	Offset int64
	Status int
}

var errProxyCut = errors.New("test proxy: connection cut")

func startTusProxy(t *testing.T, target string, p *tusProxy) string {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(to); pr.Out.Host = pr.In.Host },
		ModifyResponse: func(r *http.Response) error {
			if i, ok := r.Request.Context().Value(patchIndex{}).(int); ok {
				p.mu.Lock()
				p.patches[i].Status = r.StatusCode
				p.mu.Unlock()
			}
			return nil
		},
		ErrorHandler:  func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) }, // the client's connection drops
		FlushInterval: -1,
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := p.files[r.URL.Path]; ok {
			http.ServeFile(w, r, f)
			return
		}
		if r.Method == http.MethodPatch {
			off, _ := strconv.ParseInt(r.Header.Get("Upload-Offset"), 10, 64)
			p.mu.Lock()
			p.patches = append(p.patches, proxiedPatch{Offset: off})
			i := len(p.patches) - 1
			p.mu.Unlock()
			r = r.WithContext(context.WithValue(r.Context(), patchIndex{}, i))
			r.Body = &pacedBody{r: r.Body, p: p, cut: i == 0}
		}
		rp.ServeHTTP(w, r)
	}))
	// Every request on a connection of its own: a browser resends a request
	// whose reused keep-alive connection dropped before any answer, by
	// itself, and the page would then never see the cut it is tested on
	// (Chromium did, in about one run of three on a loaded machine).
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			patches, forwarded := p.patchStats()
			t.Logf("the proxy saw PATCHes (offset, status) %v and forwarded %d PATCH bytes", patches, forwarded)
		}
	})
	return srv.URL
}

type patchIndex struct{}

// patchStats returns the PATCHes and the PATCH bytes forwarded.
func (p *tusProxy) patchStats() ([]proxiedPatch, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxiedPatch(nil), p.patches...), p.forwarded
}

// pacedBody is a PATCH body read at the proxy's rate.
type pacedBody struct {
	r   io.ReadCloser
	p   *tusProxy
	n   int64
	cut bool
}

func (b *pacedBody) Read(buf []byte) (int, error) {
	if b.cut && b.n >= b.p.cutAt {
		return 0, errProxyCut
	}
	if len(buf) > 64<<10 {
		buf = buf[:64<<10]
	}
	n, err := b.r.Read(buf)
	b.n += int64(n)
	b.p.mu.Lock()
	b.p.forwarded += int64(n)
	b.p.mu.Unlock()
	// The pacing is the condition under test (a slow link), not a wait
	// for an outcome.
	time.Sleep(time.Duration(n) * time.Second / time.Duration(b.p.rate))
	return n, err
}

func (b *pacedBody) Close() error { return b.r.Close() }

// randomFile writes size pseudo-random bytes to dir/name and returns its
// path and hex SHA-256.
func randomFile(t *testing.T, dir, name string, size int64, seed byte) (string, string) {
	t.Helper()
	file := filepath.Join(dir, name)
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.NewChaCha8([32]byte{seed}), size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return file, hex.EncodeToString(h.Sum(nil))
}

// urlModeToken signs a URL-mode elicitation's upload token, as
// request_upload mints it.
func urlModeToken(t *testing.T, srv *Server, maxSize int64) string {
	t.Helper()
	data, _ := json.Marshal(blobs.UploadTokenData{Field: "file", Mode: "url"})
	tok, err := srv.opts.Keyring.Sign(token.Claims{Purpose: token.PurposeUpload, MaxSize: maxSize,
		Nonce: token.NewUploadID(), Expires: time.Now().Add(5 * time.Minute), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// checkResumed checks a browser upload that was cut and resumed: the
// first PATCH started at 0, and the one PATCH that completed (204) went on
// from a later offset, so the bytes before it were not sent again. (How
// many PATCHes met 409 on the way depends on timing: one sent after the
// cut before the server had taken the cut PATCH's bytes, or after the
// reload before it had taken the last ones, is refused, and the client
// asks HEAD again.) The one stored upload is the file's bytes.
func checkResumed(t *testing.T, st storage.Backend, p *tusProxy, size int64, wantSum string) {
	t.Helper()
	patches, forwarded := p.patchStats()
	t.Logf("PATCHes (offset, status) %v; %d bytes forwarded for a %d-byte file (a PATCH refused 409 is read on until the server closes)",
		patches, forwarded, size)
	var done []proxiedPatch
	for _, pt := range patches {
		if pt.Status == http.StatusNoContent {
			done = append(done, pt)
		}
	}
	if len(patches) < 3 || patches[0].Offset != 0 || patches[0].Status != 0 || len(done) != 1 || done[0].Offset == 0 {
		t.Fatalf("PATCHes %v: want the first at 0 cut, and one completed from a later offset", patches)
	}
	page, err := st.List(context.Background(), "uploads/", "", 10)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("stored: %+v %v", page, err)
	}
	if info := page.Items[0]; info.SHA256 != wantSum || info.Size != size {
		t.Fatalf("stored %+v, want %d bytes with sha256 %s", info, size, wantSum)
	}
}

// resumedAt is the page's status when it resumes an upload past 0%.
var resumedAt = regexp.MustCompile(`^Resuming field-recording\.bin at [1-9][0-9]?%…$`)

// TestUploadPageResumeChromium drives the upload page's tus upload in
// headless Chromium through a slow proxy: the proxy cuts the first PATCH's
// connection (the page resumes by itself from HEAD's offset), then the
// test reloads the page mid-upload and chooses the file again (the page
// finds the upload's URL in localStorage and resumes). The stored object
// is byte-identical. `make tools` installs Chromium and playwright-core; a
// missing install fails the test.
func TestUploadPageResumeChromium(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	node, nodeDir := chromiumTools(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st})
	const size = 24 << 20
	p := &tusProxy{rate: 6 << 20, cutAt: 6 << 20}
	front := startTusProxy(t, base, p)
	out := t.TempDir()
	file, want := randomFile(t, out, "field-recording.bin", size, 7)
	res := runChromiumScript(t, node, nodeDir, 3*time.Minute, "testdata/uploadpage/resume-test.mjs",
		front+"/upload/"+urlModeToken(t, srv, 64<<20), file, filepath.Join(out, "profile"))
	var r struct {
		Done          bool
		Status        string
		Before, After struct {
			Progress []float64
			Statuses []string
		}
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("%v: %s", err, res)
	}
	t.Logf("before the reload: %q; after: %q", r.Before.Statuses, r.After.Statuses)
	if !r.Done || !strings.Contains(strings.Join(r.Before.Statuses, "\n"), "connection was lost; resuming") ||
		len(r.After.Statuses) < 2 || !resumedAt.MatchString(r.After.Statuses[1]) {
		t.Fatalf("the page did not resume after the cut and after the reload: %+v", r)
	}
	checkResumed(t, st, p, size, want)
}

// TestUploadTusUppyChromium drives Uppy (npm uppy's prebuilt bundle: Core,
// Dashboard, Tus) in headless Chromium against an upload endpoint's tus
// URL, through the slow proxy, which also serves the test page and the
// bundle: the proxy cuts the first PATCH (Uppy retries from HEAD's
// offset), the test reloads the page past 60% and adds the file again
// (Uppy resumes the upload it remembered in localStorage). The stored
// object is byte-identical. A screenshot of the Dashboard mid-upload is
// saved in the test's artifact directory (docs/uploads-uppy.png is one).
// `make tools` installs Chromium, playwright-core and uppy; a missing
// install fails the test.
func TestUploadTusUppyChromium(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	node, nodeDir := chromiumTools(t)
	dist := filepath.Join(nodeDir, "node_modules/uppy/dist")
	if firstExisting(filepath.Join(dist, "uppy.min.js")) == "" {
		t.Fatal("npm uppy is missing from .tools/node: run `make tools`")
	}
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st})
	const size = 24 << 20
	p := &tusProxy{rate: 6 << 20, cutAt: 6 << 20, files: map[string]string{
		"/uppy-test.html":    "testdata/uppy/page.html",
		"/uppy/uppy.min.js":  filepath.Join(dist, "uppy.min.js"),
		"/uppy/uppy.min.css": filepath.Join(dist, "uppy.min.css"),
	}}
	front := startTusProxy(t, base, p)
	out := t.TempDir()
	file, want := randomFile(t, out, "survey-scans.bin", size, 9)
	shot := filepath.Join(t.ArtifactDir(), "uploads-uppy.png")
	page := front + "/uppy-test.html?endpoint=" + url.QueryEscape(front+"/u/"+urlModeToken(t, srv, 64<<20)+"/tus/")
	res := runChromiumScript(t, node, nodeDir, 3*time.Minute, "testdata/uploadpage/uppy-test.mjs",
		page, file, shot, filepath.Join(out, "profile"))
	var r struct {
		Done              bool
		Error             string
		Before, ResumedAt float64
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("%v: %s", err, res)
	}
	t.Logf("screenshot: %s; progress %.2f before the reload, %.2f on resuming", shot, r.Before, r.ResumedAt)
	if !r.Done || r.Error != "" || r.ResumedAt < 0.1 {
		t.Fatalf("Uppy did not resume after the reload: %+v", r)
	}
	checkResumed(t, st, p, size, want)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
}
