package server

import (
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// TestSessionEndAcrossNodes: two servers with one keyring on one store (two
// nodes of a cluster; on S3 each with its own client) — a 2025-11-25
// session DELETEd on A is refused by B at its very next request, though B
// served the session a moment before, and a second DELETE, on B, finds it
// ended. The live session is a claim in the store named by a digest, never
// the id, and its end removes the claim: the DELETE writes nothing.
func TestSessionEndAcrossNodes(t *testing.T) {
	parallel(t)
	t.Run("localfs", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		st := newLocalStoreAt(t, dir)
		records := func() []string { return sessionClaimFiles(t, dir) }
		// One store: a directory takes one process's lock.
		checkSessionEndAcrossNodes(t, st, st, func(sid string) {
			names := records()
			if len(names) != 1 {
				t.Fatalf("session claims of a live session: %v; want one", names)
			}
			name := names[0]
			if strings.Contains(name, sid) || !regexp.MustCompile(`^\d{12}-[0-9a-f]{32}$`).MatchString(name) ||
				!strings.HasSuffix(name, onetime.SessionName(sid)) {
				t.Errorf("claim file %q; want <expiry>-<digest of the session id>", name)
			}
		})
		if names := records(); len(names) != 0 {
			t.Errorf("session claims after the session ended: %v; want none", names)
		}
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		srv := s3test.Shared(t)
		bucket := "se" + strings.ToLower(rand.Text()[:12])
		open := func() storage.Backend {
			b, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint,
				AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: bucket, CreateBucket: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}
		checkSessionEndAcrossNodes(t, open(), open(), func(string) {})
	})
}

// checkSessionEndAcrossNodes runs the cluster of TestSessionEndAcrossNodes
// on stores a and b; live checks the store while the session is live.
func checkSessionEndAcrossNodes(t *testing.T, a, b storage.Backend, live func(sid string)) {
	baseA, _ := startTestServer(t, Options{Backend: a})
	baseB, _ := startTestServer(t, Options{Backend: b})
	onA := newMCPClient(t, baseA, legacyVersion, "{}")
	onB := *onA
	onB.url = baseB + "/mcp"
	ping := func(c *mcpClient, when string, want int) {
		t.Helper()
		if r := c.call("ping", ""); r.status != want {
			t.Fatalf("ping %s: %d %.300s; want %d", when, r.status, r.body, want)
		}
	}
	del := func(c *mcpClient, when string, want int) {
		t.Helper()
		if status := deleteSession(t, c); status != want {
			t.Fatalf("DELETE %s: %d; want %d", when, status, want)
		}
	}
	ping(&onB, "on B before the DELETE", http.StatusOK)
	ping(onA, "on A before the DELETE", http.StatusOK)
	live(onA.sid)
	del(onA, "on A", http.StatusOK)
	ping(&onB, "on B after the DELETE on A", http.StatusNotFound)
	ping(onA, "on A after its DELETE", http.StatusNotFound)
	del(&onB, "again, on B", http.StatusNotFound)
}

// sessionClaimFiles lists the session claims of the local store in dir.
func sessionClaimFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(storage.ClaimsDir), onetime.Sessions))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
