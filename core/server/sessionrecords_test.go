package server

import (
	"net/http"
	"testing"

	"github.com/mcpblob/mcpblob/storage/localfs"
)

// deleteSession sends DELETE /mcp for c's session and returns the status.
func deleteSession(t *testing.T, c *mcpClient) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", legacyVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSessionClaimsBoundedByLive (issue 23, finding 5): ending a session
// writes nothing to the store, and after a storm of sessions begun and
// ended the session claims on the local store are no more than the
// sessions still live (71946bf wrote a claim per DELETE that lived for the
// session's 24 hours: 1,493 files in 5 s from one client).
func TestSessionClaimsBoundedByLive(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	st, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base, _ := startTestServer(t, Options{Backend: st})
	const storm, kept = 150, 5
	var live []*mcpClient
	for i := range storm {
		c := newMCPClient(t, base, legacyVersion, "{}")
		if i%(storm/kept) == 0 {
			live = append(live, c)
			continue
		}
		before := len(sessionClaimFiles(t, dir))
		if st := deleteSession(t, c); st != http.StatusOK {
			t.Fatalf("DELETE %d: %d", i, st)
		}
		if after := len(sessionClaimFiles(t, dir)); after >= before {
			t.Fatalf("DELETE %d: %d session claims before, %d after; want the DELETE to write none", i, before, after)
		}
	}
	if n := len(sessionClaimFiles(t, dir)); n > len(live) {
		t.Errorf("%d session claims after %d sessions, %d still live; want at most %d", n, storm, len(live), len(live))
	}
	for _, c := range live {
		if r := c.call("ping", ""); r.status != http.StatusOK {
			t.Errorf("a live session after the storm: %d", r.status)
		}
	}
}
