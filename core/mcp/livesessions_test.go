package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
)

// sharedLive is a LiveSessions kept in memory and shared by the Servers of
// a test, as a store is shared by the nodes of a cluster. It keeps digests,
// never ids, as the interface asks; fail makes every call fail.
type sharedLive struct {
	mu    sync.Mutex
	live  map[[32]byte]time.Time
	fail  error
	asked int // Live calls
}

func (f *sharedLive) Begin(_ context.Context, id string, exp time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	d := sha256.Sum256([]byte(id))
	if _, ok := f.live[d]; ok {
		return errors.New("a session record begun twice")
	}
	if f.live == nil {
		f.live = map[[32]byte]time.Time{}
	}
	f.live[d] = exp
	return nil
}

func (f *sharedLive) Live(_ context.Context, id string, _ time.Time) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.fail != nil {
		return false, f.fail
	}
	_, ok := f.live[sha256.Sum256([]byte(id))]
	return ok, nil
}

func (f *sharedLive) End(_ context.Context, id string, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	delete(f.live, sha256.Sum256([]byte(id)))
	return nil
}

func (f *sharedLive) records() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.live)
}

func (f *sharedLive) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *sharedLive) askedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// twoNodes returns two Servers with one keyring and one LiveSessions: two
// nodes of a cluster, logging to log.
func twoNodes(t *testing.T, log *lockedBuffer) (a, b *Server, ends *sharedLive) {
	t.Helper()
	kr, err := token.NewKeyring(token.Key{ID: "k", Secret: bytes.Repeat([]byte{3}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	ends = &sharedLive{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	a = NewServer(testImpl, &Options{Keyring: kr, LiveSessions: ends, Logger: logger})
	b = NewServer(testImpl, &Options{Keyring: kr, LiveSessions: ends, Logger: logger})
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b, ends
}

// on returns c's session as seen through node s.
func (c *testClient) on(s *Server) *testClient {
	d := *c
	d.s = s
	return &d
}

// deleteSession sends DELETE with c's session header.
func (c *testClient) deleteSession() *response {
	c.t.Helper()
	rec := newRecorder()
	c.s.ServeMCP(&Request{Method: http.MethodDelete, Header: c.headers("", ""), Principal: c.principal}, rec)
	return c.parse(rec)
}

func wantStatus(t *testing.T, what string, r *response, status, code int) {
	t.Helper()
	if r.rec.statusCode() != status {
		t.Fatalf("%s: HTTP %d %s; want %d", what, r.rec.statusCode(), r.rec.body.String(), status)
	}
	if code != 0 && (r.Error == nil || r.Error.Code != code) {
		t.Fatalf("%s: JSON-RPC error %+v; want code %d", what, r.Error, code)
	}
}

// TestSessionEndSharedAcrossNodes: a session DELETEd on node A is refused
// by node B at B's very next request (B asks the shared record on every
// request, and ends B's streams of the session), and of two DELETEs only the
// first succeeds, wherever each lands.
func TestSessionEndSharedAcrossNodes(t *testing.T) {
	a, b, ends := twoNodes(t, &lockedBuffer{})
	onA := newLegacyClient(t, a)
	onB := onA.on(b)
	for i := range 3 {
		before := ends.askedCount()
		wantStatus(t, "ping on B before the DELETE", onB.request("ping", "", `{}`), http.StatusOK, 0)
		if ends.askedCount() != before+1 {
			t.Fatalf("request %d on B asked the record %d times; want once per request", i, ends.askedCount()-before)
		}
	}
	getDone := make(chan *recorder)
	go func() { // B holds the session's GET stream
		rec := newRecorder()
		h := onB.headers("", "")
		h["Accept"] = "text/event-stream"
		b.ServeMCP(&Request{Method: http.MethodGet, Header: h}, rec)
		getDone <- rec
	}()
	waitFor(t, "B's GET stream to open", func() bool { return b.Sessions() == 1 && b.hasGetStream(onB.sid) })

	wantStatus(t, "DELETE on A", onA.deleteSession(), http.StatusOK, 0)
	wantStatus(t, "ping on B after the DELETE on A", onB.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	select {
	case <-getDone:
	case <-time.After(10 * time.Second):
		t.Fatal("B's GET stream still open after B learnt the session ended")
	}
	asked := ends.askedCount()
	wantStatus(t, "ping on B again", onB.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	if ends.askedCount() != asked {
		t.Error("B asked the record again about a session it knows ended")
	}
	wantStatus(t, "ping on A", onA.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	wantStatus(t, "DELETE again on B", onB.deleteSession(), http.StatusNotFound, CodeSessionNotFound)

	// Two nodes that both still hold a session: the second DELETE, on the
	// other node, finds it ended.
	c := newLegacyClient(t, a)
	wantStatus(t, "ping on B", c.on(b).request("ping", "", `{}`), http.StatusOK, 0)
	wantStatus(t, "first DELETE, on B", c.on(b).deleteSession(), http.StatusOK, 0)
	wantStatus(t, "second DELETE, on A", c.deleteSession(), http.StatusNotFound, CodeSessionNotFound)
	if n := ends.records(); n != 0 { // every request above has returned
		t.Errorf("%d session records left after both sessions ended; want 0", n)
	}
}

// TestSessionEndRecordFails: when the shared record fails, a request of a
// session is answered 503 with a JSON-RPC error (never 404, never served),
// a DELETE is answered 503 yet revokes the session on its node, and the
// DELETE retried once the record works again removes the record for every
// node.
func TestSessionEndRecordFails(t *testing.T) {
	var log lockedBuffer
	a, b, ends := twoNodes(t, &log)
	onA := newLegacyClient(t, a)
	onB := onA.on(b)
	ends.setFail(errors.New("store down"))
	wantStatus(t, "ping while the record fails", onB.request("ping", "", `{}`), http.StatusServiceUnavailable, CodeInternalError)
	wantStatus(t, "DELETE while the record fails", onA.deleteSession(), http.StatusServiceUnavailable, CodeInternalError)
	wantStatus(t, "ping on A after its failed DELETE", onA.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	ends.setFail(nil)
	wantStatus(t, "ping on B: the record was never removed", onB.request("ping", "", `{}`), http.StatusOK, 0)
	wantStatus(t, "DELETE retried on A", onA.deleteSession(), http.StatusOK, 0)
	wantStatus(t, "ping on B after the retried DELETE", onB.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	logged := log.String()
	if strings.Count(logged, "level=ERROR") != 2 || !strings.Contains(logged, "store down") {
		t.Errorf("want the two failures logged at ERROR with their cause; log:\n%s", logged)
	}
	if strings.Contains(logged, onA.sid) {
		t.Errorf("the log names the session id:\n%s", logged)
	}
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// hasGetStream reports whether session sid's GET stream is claimed here.
func (s *Server) hasGetStream(sid string) bool {
	sess := s.sessions.Lookup(sid)
	if sess == nil || !sess.ClaimGetStream() {
		return sess != nil
	}
	sess.ReleaseGetStream()
	return false
}

// TestKnownSessionChecksPrincipalAndExpiry: a session this node holds is
// served without verifying its signed id again (session.Table.Known), yet
// another principal's request with that id, or one after the id expired,
// is still refused as the full check refuses it.
func TestKnownSessionChecksPrincipalAndExpiry(t *testing.T) {
	s := NewServer(testImpl, &Options{SessionTTL: 2 * time.Second})
	t.Cleanup(func() { s.Close() })
	alice := newLegacyClientAs(t, s, "alice")
	wantStatus(t, "alice's ping", alice.request("ping", "", `{}`), http.StatusOK, 0)
	bob := *alice
	bob.principal = "bob"
	wantStatus(t, "bob with alice's session id", bob.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	wantStatus(t, "alice again", alice.request("ping", "", `{}`), http.StatusOK, 0)
	time.Sleep(3 * time.Second) // the id carries whole seconds
	wantStatus(t, "alice after expiry", alice.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
}
