package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth/oauth"
	"github.com/mcpblob/mcpblob/core/auth/oauthtest"
	"github.com/mcpblob/mcpblob/core/mcp"
)

// credStreams are a GET stream (2025-11-25) and a subscriptions/listen
// stream (2026-07-28) opened with one credential.
type credStreams struct {
	get, listen *sseStream
}

// openCredStreams opens both streams at base with the Authorization header
// authz and waits until each sees the hub's events.
func openCredStreams(t *testing.T, base, authz string) credStreams {
	t.Helper()
	hdr := map[string]string{"Authorization": authz}
	legacy := newMCPClientWith(t, base, legacyVersion, `{}`, hdr)
	get := legacy.events(legacy.get(""))
	// The GET stream's first comment goes out once it is subscribed.
	if line, err := get.s.ReadLine(); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("GET stream's first line %q, %v; want a comment", line, err)
	}
	modern := newMCPClientWith(t, base, modernVersion, `{}`, hdr)
	listen := modern.events(modern.requestID(`"listen-1"`, "subscriptions/listen", `{"notifications":{"resourcesListChanged":true}}`))
	if m, ok := listen.next(); !ok || m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen: want the acknowledgement first, got %+v", m)
	}
	return credStreams{get: get, listen: listen}
}

// nextWithin is s.next with a deadline: timedOut when neither a message
// nor the end came within d.
func nextWithin(s *sseStream, d time.Duration) (m rpcMsg, ok, timedOut bool) {
	type got struct {
		m  rpcMsg
		ok bool
	}
	ch := make(chan got, 1)
	go func() {
		m, ok := s.next()
		ch <- got{m, ok}
	}()
	select {
	case g := <-ch:
		return g.m, g.ok, false
	case <-time.After(d):
		return rpcMsg{}, false, true
	}
}

// deliver publishes a list change and checks that every stream of all
// gets it.
func deliver(t *testing.T, srv *Server, all ...credStreams) {
	t.Helper()
	srv.MCP().Hub().Publish(mcp.Event{Kind: mcp.ResourceListChanged})
	for _, cs := range all {
		for name, s := range map[string]*sseStream{"GET": cs.get, "listen": cs.listen} {
			if m, ok, _ := nextWithin(s, 10*time.Second); !ok || m.Method != "notifications/resources/list_changed" {
				t.Fatalf("%s stream while its credential is good: %+v (ok=%v)", name, m, ok)
			}
		}
	}
}

// endedWith publishes a list change and checks that neither stream
// delivers it: the GET stream just ends, listen ends with the -32000 error
// naming reason. The other streams get the change.
func (cs credStreams) endedWith(t *testing.T, srv *Server, reason string, others ...credStreams) {
	t.Helper()
	deliver(t, srv, others...)
	m, ok, timedOut := nextWithin(cs.get, 15*time.Second)
	if ok || timedOut {
		t.Errorf("GET stream after its credential ended: %+v (still open: %v); want it closed without the change", m, timedOut)
	}
	m, ok, timedOut = nextWithin(cs.listen, 15*time.Second)
	if !ok || m.Method != "" || string(m.ID) != `"listen-1"` || m.Error == nil || !strings.Contains(string(m.Error), `"reason":"`+reason+`"`) {
		t.Fatalf("listen after its credential ended: %+v (still open: %v); want its -32000 error with reason %s", m, timedOut, reason)
	}
	if m, ok, _ := nextWithin(cs.listen, 5*time.Second); ok {
		t.Fatalf("listen sent %+v after its final error", m)
	}
}

// TestStreamsEndWithTokenExpiry: streams opened with an OAuth token of the
// real authorization server end when the token expires (71946bf: a token
// expired 33 s earlier still got list_changed on both).
func TestStreamsEndWithTokenExpiry(t *testing.T) {
	parallel(t)
	o := startOAuthServer(t, Options{}, func(c *oauth.Config) { c.Leeway = time.Millisecond })
	tok := o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{ExpiresIn: 5 * time.Second})
	expires := time.Now().Add(5 * time.Second)
	cs := openCredStreams(t, o.base, "Bearer "+tok)
	deliver(t, o.c.srv, cs)
	time.Sleep(time.Until(expires) + 200*time.Millisecond)
	if r := o.post("Bearer "+tok, "/mcp"); r.status != http.StatusUnauthorized {
		t.Fatalf("the expired token on a new request: %d, want 401", r.status)
	}
	cs.endedWith(t, o.c.srv, "credential_expired")
}

// TestStreamsEndWithKeyRevocation: streams opened with an API key end once
// a reload of the keys file drops the key; the other keys' streams go on.
// A reload that would leave no key (authentication off) changes nothing.
func TestStreamsEndWithKeyRevocation(t *testing.T) {
	parallel(t)
	keysFile := filepath.Join(t.TempDir(), "keys")
	writeKeys := func(lines ...string) {
		t.Helper()
		if err := os.WriteFile(keysFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := HashKey("alice-key")+" alice", HashKey("bob-key")+" bob"
	writeKeys(alice, bob)
	base, srv := startTestServer(t, Options{Backend: newLocalStore(t), Auth: Auth{KeysFile: keysFile}})
	aliceStreams, bobStreams := openCredStreams(t, base, "Bearer alice-key"), openCredStreams(t, base, "Bearer bob-key")
	deliver(t, srv, aliceStreams, bobStreams)

	writeKeys("# nobody")
	if _, err := srv.ReloadKeys(); err == nil {
		t.Fatal("a reload to no keys at all was accepted: it would open the endpoint")
	}
	writeKeys(bob)
	if n, err := srv.ReloadKeys(); err != nil || n != 1 {
		t.Fatalf("ReloadKeys = %d, %v; want 1 key", n, err)
	}
	aliceStreams.endedWith(t, srv, "credential_revoked", bobStreams)
	c := newMCPClientWith(t, base, modernVersion, `{}`, map[string]string{"Authorization": "Bearer alice-key"})
	if r := c.call("tools/list", `{}`); r.status != http.StatusUnauthorized {
		t.Fatalf("the revoked key on a new request: %d, want 401", r.status)
	}
}
