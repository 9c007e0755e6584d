package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/auth/oauth"
	"github.com/mcpblob/mcpblob/core/auth/oauthtest"
)

// TestQuotaSources: a key line's quota, the quota file (which wins, and
// is read again with the keys), and an OAuth token's quota claim each set
// the quota a PUT meets; the default applies to everyone else.
func TestQuotaSources(t *testing.T) {
	parallel(t)
	file := filepath.Join(t.TempDir(), "quotas")
	writeFile(t, file, "bob bytes=300\n")
	bob := map[string]string{"Authorization": "Bearer bob-key"}
	c := newBPClient(t, Options{Backend: newLocalStore(t), Auth: Auth{Keys: []string{
		auth.KeyLine(quotaSecret, "alice", nil) + " quota=200", auth.KeyLine("bob-key", "bob", nil) + " quota=100",
		auth.KeyLine("carol-key", "carol", nil)}},
		Quota: Quota{Default: auth.Quota{Bytes: 50}, File: file}})
	for _, step := range []struct {
		who    map[string]string
		size   int
		status int
	}{
		{aliceKey, 200, 201}, {aliceKey, 1, 403}, // the key line's 200
		{bob, 250, 201}, {bob, 51, 403}, // the file's 300 over the key line's 100
		{map[string]string{"Authorization": "Bearer carol-key"}, 51, 403}, // the default's 50
	} {
		if r := c.put("k", make([]byte, step.size), step.who); r.status != step.status {
			t.Fatalf("PUT of %d bytes as %s: %d %s, want %d", step.size, step.who["Authorization"], r.status, r.body, step.status)
		}
	}
	writeFile(t, file, "bob bytes=400\n")
	if _, err := c.srv.ReloadKeys(); err != nil {
		t.Fatal(err)
	}
	if r := c.put("k2", make([]byte, 150), bob); r.status != 201 {
		t.Fatalf("PUT after the file raised bob's quota: %d %s", r.status, r.body)
	}
	writeFile(t, file, "bob bytes=lots\n")
	if _, err := c.srv.ReloadKeys(); err == nil {
		t.Fatal("a quota file that does not parse was reloaded")
	}
}

func TestQuotaClaim(t *testing.T) {
	parallel(t)
	o := startOAuthServer(t, Options{Quota: Quota{Claims: true}}, func(c *oauth.Config) { c.QuotaClaim = "storage_quota" })
	tok := o.mint(t, "dana", "blobs:read blobs:write", oauthtest.MintRequest{Claims: map[string]any{"storage_quota": "1K"}})
	hdr := map[string]string{"Authorization": "Bearer " + tok}
	if r := o.c.put("a", make([]byte, 1024), hdr); r.status != 201 {
		t.Fatalf("PUT within the claimed quota: %d %s", r.status, r.body)
	}
	r := o.c.put("b", make([]byte, 1), hdr)
	wantAPIError(t, "PUT past the claimed quota", r, 403, "quota_exceeded", "the bytes quota is 1024")
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
