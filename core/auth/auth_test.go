package auth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stubVerifier accepts exactly one token; it stands in for package oauth,
// whose own tests (and core/server's, against a real authorization
// server) cover verification.
type stubVerifier struct{ good string }

func (v stubVerifier) VerifyToken(_ context.Context, tok string) (Identity, error) {
	if tok == v.good {
		return Identity{Principal: "alice", Scopes: []string{ScopeRead}}, nil
	}
	return Identity{}, errors.New("invalid token: bad signature")
}

func testAuthenticator(t testing.TB) *Authenticator {
	keys, err := LoadKeys("", []string{KeyLine("k-rw", "carol", nil), KeyLine("k-admin", "root", []string{ScopeAdmin}),
		KeyLine("k-old", "", nil)})
	if err != nil {
		t.Fatal(err)
	}
	return &Authenticator{Keys: keys, OAuth: stubVerifier{good: "a.b.c"}}
}

func TestAuthenticate(t *testing.T) {
	a := testAuthenticator(t)
	for header, want := range map[string]string{
		"Bearer k-rw":      "carol [blobs:read blobs:write]",
		"bearer  k-rw ":    "carol [blobs:read blobs:write]",
		"Bearer k-admin":   "root [blobs:admin]",
		"Bearer a.b.c":     "alice [blobs:read]",
		"":                 "401",
		"Bearer":           "401 invalid_request",
		"Basic k-rw":       "401 invalid_request",
		"Bearer x.y.z":     "401 invalid_token",
		"Bearer not-a-key": "401 invalid_token",
	} {
		id, f := a.Authenticate(context.Background(), header)
		got := id.Principal + " [" + strings.Join(id.Scopes, " ") + "]"
		if f != nil {
			got = strings.TrimSpace("401 " + f.Challenge.Error)
		}
		if got != want {
			t.Errorf("Authenticate(%q) = %s, want %s", header, got, want)
		}
	}
	if id, f := a.Authenticate(context.Background(), "Bearer k-old"); f != nil || !strings.HasPrefix(id.Principal, "key-") || !id.Has(ScopeWrite) || id.Admin() {
		t.Errorf("a key line without principal or scopes: %+v %v", id, f)
	}
}

func TestRequireAndChallenge(t *testing.T) {
	id := Identity{Principal: "p", Scopes: []string{ScopeRead}}
	if Require(id, ScopeRead) != nil || Require(Identity{Scopes: []string{ScopeAdmin}}, ScopeWrite) != nil {
		t.Error("a granted scope was refused")
	}
	f := Require(id, ScopeWrite)
	if f == nil || f.Status != 403 {
		t.Fatalf("Require(read-only, write) = %+v", f)
	}
	f.Challenge.ResourceMetadata = "https://x/.well-known/oauth-protected-resource/mcp"
	want := `Bearer error="insufficient_scope", error_description="the token lacks the blobs:write scope", scope="blobs:write", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp"`
	if got := f.Challenge.String(); got != want {
		t.Errorf("challenge\n got %s\nwant %s", got, want)
	}
	if got := (Challenge{Description: "a \"quoted\"\r\n\\ thing"}).String(); got != `Bearer error_description="a quoted thing"` {
		t.Errorf("unsafe description: %s", got)
	}
}

func TestKeyLines(t *testing.T) {
	for _, bad := range []string{"nothex alice", "abcd alice", KeyLine("k", "a", nil) + " b", KeyLine("k", "a", nil) + " scopes=read,delete"} {
		if _, err := LoadKeys("", []string{bad}); err == nil {
			t.Errorf("key line %q accepted", bad)
		}
	}
	if s, err := ParseKeyScopes("write, blobs:read,read"); err != nil || strings.Join(s, " ") != "blobs:read blobs:write" {
		t.Errorf("ParseKeyScopes = %v, %v", s, err)
	}
}

// TestLoadKeysNamesTheLine: an error points at the bad line of the file,
// whatever extra keys come before it.
func TestLoadKeysNamesTheLine(t *testing.T) {
	good := KeyLine("k-1", "", nil)
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("# keys\n"+good+"\nnot-a-digest\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadKeys(path, []string{good, good})
	if err == nil || !strings.Contains(err.Error(), path+" line 3:") {
		t.Errorf("LoadKeys: %v, want it to name %s line 3", err, path)
	}
	if _, err := LoadKeys("", []string{good, "bad"}); err == nil || !strings.Contains(err.Error(), "API key 2:") {
		t.Errorf("LoadKeys of extra keys: %v, want it to name API key 2", err)
	}
}

// FuzzAuthenticate: no Authorization header crashes the parser or
// authenticates without being one of the configured credentials.
func FuzzAuthenticate(f *testing.F) {
	for _, s := range []string{"", "Bearer k-rw", "Bearer a.b.c", "Basic x", "Bearer  ", "bearer\tk-rw", "Bearer k-rw\x00", " BeArer k-rw"} {
		f.Add(s)
	}
	a := testAuthenticator(f)
	f.Fuzz(func(t *testing.T, header string) {
		id, fail := a.Authenticate(context.Background(), header)
		if fail != nil {
			if fail.Status != 401 || strings.ContainsAny(fail.Challenge.String(), "\r\n") {
				t.Fatalf("%q: %+v", header, fail)
			}
			return
		}
		// Surrounding whitespace is not part of a field value (RFC 9110
		// OWS), so the scheme starts at the first other byte.
		h := strings.TrimSpace(header)
		cred := strings.TrimSpace(h[strings.IndexByte(h, ' ')+1:])
		if cred != "k-rw" && cred != "k-admin" && cred != "k-old" && cred != "a.b.c" {
			t.Fatalf("%q authenticated as %+v", header, id)
		}
	})
}

// TestStillValid: a key's check holds until the keys are replaced without
// it or with another principal or scopes for it; an OAuth token has none
// (its Expires ends it).
func TestStillValid(t *testing.T) {
	a := testAuthenticator(t)
	header := "bearer  k-rw "
	id, f := a.Authenticate(context.Background(), header)
	if f != nil {
		t.Fatal(f)
	}
	valid := a.StillValid(header, id)
	if valid == nil || !valid() {
		t.Fatal("a key just authenticated is not valid")
	}
	reload := func(lines ...string) {
		t.Helper()
		next, err := LoadKeys("", lines)
		if err != nil {
			t.Fatal(err)
		}
		a.Keys.Replace(next)
	}
	reload(KeyLine("k-admin", "root", []string{ScopeAdmin}), KeyLine("k-rw", "carol", nil))
	if !valid() {
		t.Error("the key is still in the reloaded set but no longer valid")
	}
	reload(KeyLine("k-rw", "carol", []string{ScopeRead}))
	if valid() {
		t.Error("the key's scopes changed but it is still valid as it was")
	}
	reload(KeyLine("k-admin", "root", []string{ScopeAdmin}))
	if valid() {
		t.Error("a key removed by a reload is still valid")
	}
	if _, f := a.Authenticate(context.Background(), header); f == nil {
		t.Error("a removed key still authenticates")
	}
	oid, _ := a.Authenticate(context.Background(), "Bearer a.b.c")
	if a.StillValid("Bearer a.b.c", oid) != nil || a.StillValid("", Open) != nil {
		t.Error("an OAuth token or the open endpoint got a revocation check")
	}
}

// TestMCPScopeFiles: the SEP-2631 methods that create or change files need
// write, those that read them read, like the blob tools.
func TestMCPScopeFiles(t *testing.T) {
	for method, want := range map[string]string{
		"files/authorizeUpload": ScopeWrite, "files/prepareUpload": ScopeWrite, "files/completeUpload": ScopeWrite,
		"files/authorizeDownload": ScopeRead, "files/getDownload": ScopeRead, "files/getUpload": ScopeRead,
	} {
		if got := MCPScope(method, false); got != want {
			t.Errorf("MCPScope(%s) = %q; want %q", method, got, want)
		}
	}
}
