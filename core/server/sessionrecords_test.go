package server

import (
	"net/http"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
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

// TestSessionClaimsBoundedByLive: ending a session writes nothing to the
// store, and after a storm of sessions begun and ended the session claims on
// the local store are no more than the sessions still live (71946bf wrote a
// claim per DELETE that lived for the session's 24 hours: 1,493 files in 5 s
// from one client).
func TestSessionClaimsBoundedByLive(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	st := newLocalStoreAt(t, dir)
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

// TestSessionRecordsPerMinute: each initialize writes a session record,
// counted against the principal's claims a minute: beyond
// --max-claims-per-minute initialize is refused with 429, Retry-After and
// JSON-RPC -32029 naming the limit, and the refused one writes nothing.
func TestSessionRecordsPerMinute(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	st := newLocalStoreAt(t, dir)
	base, _ := startTestServer(t, Options{Backend: st, MCP: mcp.Options{Limits: limits.Limits{ClaimsPerMinute: 3}}})
	c := newMCPClient(t, base, legacyVersion, "{}")
	newMCPClient(t, base, legacyVersion, "{}")
	newMCPClient(t, base, legacyVersion, "{}")
	fresh := *c
	fresh.sid = ""
	r := fresh.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	e := r.rpcError()
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || e.Code != limits.CodeLimitExceeded ||
		e.Data["limit"] != "claims_per_minute" || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("the 4th initialize in a minute: %d (Retry-After %q) %+v; want 429 with Retry-After and -32029 naming claims_per_minute",
			r.status, r.header.Get("Retry-After"), e)
	}
	if n := len(sessionClaimFiles(t, dir)); n != 3 {
		t.Errorf("%d session claims; want 3", n)
	}
}
