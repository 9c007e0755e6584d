package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
)

// TestLoginChromium drives the upload page's sign-in in headless Chromium:
// the link lands on the authorization server's login form, alice signs in,
// the browser comes back to the page with an HttpOnly, Secure, SameSite=Lax
// login cookie (Chromium takes http://127.0.0.1 as a secure context, so a
// Secure cookie works over loopback HTTP) and uploads a file, which is
// stored in alice's namespace and listed by /v1 for her own access token.
// Like TestUploadPageChromium, a missing Chromium or Node fails the test.
func TestLoginChromium(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	node, nodeDir := chromiumTools(t)
	e := startLoginEnv(t, "", true)
	tok := mintPageToken(t, e.srv, "alice")
	out := t.TempDir()
	content := []byte("signed-in upload from Chromium\n")
	file := filepath.Join(out, "signed-in.txt")
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.ArtifactDir(), "login-upload-page.png") // kept with go test -artifacts -outputdir DIR
	res := runChromiumScript(t, node, nodeDir, 2*time.Minute, "testdata/login/login-test.mjs",
		e.base+"/upload/"+tok, file, shot, filepath.Join(out, "profile"), "alice", "alice-pw")
	var r struct {
		LoginPage       string
		Done            bool
		Status          string
		ScriptSeesLogin bool
		Cookies         []struct {
			Name, SameSite, Path string
			HTTPOnly             bool `json:"httpOnly"`
			Secure               bool
		}
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("%v: %s", err, res)
	}
	t.Logf("screenshot: %s; login page %s; status %q; cookies %+v", shot, r.LoginPage, r.Status, r.Cookies)
	if !strings.HasPrefix(r.LoginPage, e.as.Issuer+"/login") || !r.Done || r.ScriptSeesLogin {
		t.Fatalf("sign-in and upload: %+v", r)
	}
	found := false
	for _, c := range r.Cookies {
		if c.Name == loginCookie {
			found = c.HTTPOnly && c.Secure && c.SameSite == "Lax" && c.Path == "/"
		}
	}
	if !found {
		t.Fatalf("Chromium holds no HttpOnly, Secure, SameSite=Lax %s cookie: %+v", loginCookie, r.Cookies)
	}
	sum := sha256.Sum256(content)
	page, err := e.st.List(context.Background(), ".ns/alice/", "", 10)
	if err != nil || len(page.Items) != 1 || page.Items[0].SHA256 != hex.EncodeToString(sum[:]) ||
		!strings.HasSuffix(page.Items[0].Key, "/signed-in.txt") {
		t.Fatalf("alice's namespace: %+v %v", page, err)
	}
	// The same blob, as alice's own MCP client sees it through /v1.
	at := e.as.Token(t, loginClient, e.base+callbackPath, auth.CanonicalResource(e.base), "alice", "alice-pw", auth.ScopeRead)
	c := &bpClient{t: t, base: e.base, hc: &http.Client{Timeout: 10 * time.Second}}
	list := c.do(http.MethodGet, "/v1/blobs?prefix=uploads/", nil, map[string]string{"Authorization": "Bearer " + at})
	if list.status != http.StatusOK || !strings.Contains(string(list.body), "/signed-in.txt") {
		t.Fatalf("alice's /v1 listing: %d %s", list.status, list.body)
	}
}

// runChromiumScript runs a playwright-core script from testdata (copied
// into nodeDir, where its bare imports resolve) for at most timeout and
// returns its stdout.
func runChromiumScript(t *testing.T, node, nodeDir string, timeout time.Duration, path string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{copyNodeScript(t, nodeDir, path)}, args...)...)
	cmd.Dir = nodeDir
	res, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s: %v\n%s\n%s", path, err, res, stderr)
	}
	return res
}
