package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/clientcaps"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/token"
)

// initializeAs sends initialize alone (no notifications/initialized) for
// principal with caps, and returns the response and the session id.
func initializeAs(t *testing.T, s *Server, principal, caps string) (*response, string) {
	t.Helper()
	c := &testClient{t: t, s: s, principal: principal}
	res := c.post(HeaderMap{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+
			`,"clientInfo":{"name":"test","version":"1"}}}`))
	return res, res.rec.header.Get(headers.SessionID)
}

// clientOf is a client of session sid for principal on s.
func clientOf(t *testing.T, s *Server, principal, sid string) *testClient {
	return &testClient{t: t, s: s, principal: principal, sid: sid}
}

// wantLimit checks a refusal by a limit: HTTP status, -32029, data naming
// the limit and scope, and a Retry-After.
func wantLimit(t *testing.T, what string, r *response, status int, limit, scope string) {
	t.Helper()
	wantStatus(t, what, r, status, limits.CodeLimitExceeded)
	var data struct{ Limit, Scope string }
	if err := json.Unmarshal(r.Error.Data, &data); err != nil || data.Limit != limit || data.Scope != scope {
		t.Fatalf("%s: error data %s; want limit %q, scope %q", what, r.Error.Data, limit, scope)
	}
	if r.rec.header.Get("Retry-After") == "" {
		t.Fatalf("%s: no Retry-After", what)
	}
}

// TestSessionCapabilitiesPruned: a session keeps of the client's capabilities
// only the members the server reads, so 48 initializes with 1 MiB of
// capabilities each (an experimental payload, and junk inside elicitation)
// hold a few KiB, not 48 MiB (71946bf kept every object over 512 B whole for
// the session's life). -short makes 8 (still 4 times the bound if kept):
// the initializes run one after another, so the race detector finds in 8
// what it would in 48, at a sixth of its ~35 s.
func TestSessionCapabilitiesPruned(t *testing.T) {
	s := NewServer(testImpl, &Options{})
	t.Cleanup(func() { s.Close() })
	var junk strings.Builder // 512 KiB in strings of 32 KiB (a string over 64 KiB is refused)
	for i := range 16 {
		if i > 0 {
			junk.WriteByte(',')
		}
		junk.WriteString(`"p` + strconv.Itoa(i) + `":"` + strings.Repeat("x", 32<<10) + `"`)
	}
	caps := `{"experimental":{` + junk.String() + `},"elicitation":{"form":{},"junk":{` + junk.String() +
		`}},"resourceStreaming":{"maxStreamSize":4096},"sampling":{"tools":{}},"roots":{"listChanged":true}}`
	n := 48
	if testing.Short() {
		n = 8
	}
	before := heapInUse()
	sids := make([]string, n)
	for i := range sids {
		res, sid := initializeAs(t, s, "", caps)
		if res.Error != nil || sid == "" {
			t.Fatalf("initialize %d: %s", i, res.rec.body.String())
		}
		sids[i] = sid
	}
	grew := int64(heapInUse()) - int64(before)
	if limit := int64(2 << 20); grew > limit {
		t.Errorf("%d sessions with 1 MiB capabilities each grew the heap by %d KiB; want at most %d KiB", n, grew>>10, limit>>10)
	}
	kept := s.sessions.Lookup(sids[0]).Caps
	want := `{"elicitation":{"form":{}},"experimental":{},"resourceStreaming":{"maxStreamSize":4096},"roots":{},"sampling":{}}`
	if string(kept) != want {
		t.Errorf("the session kept %.200s; want %s", kept, want)
	}
	if len(sids[n-1]) > 1024 {
		t.Errorf("session id of %d bytes; the pruned capabilities should fit in it", len(sids[n-1]))
	}
	c := clientOf(t, s, "", sids[n-1])
	wantStatus(t, "a request of a pruned session", c.request("ping", "", `{}`), http.StatusOK, 0)
}

// TestSessionCapabilitiesOverLimit: when even the members the server reads
// take more than Limits.CapabilityBytes, initialize is refused with -32602
// naming capabilities and the limit, and no session is held.
func TestSessionCapabilitiesOverLimit(t *testing.T) {
	s := NewServer(testImpl, &Options{})
	t.Cleanup(func() { s.Close() })
	var b strings.Builder
	b.WriteString(`{"extensions":{`)
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"io.example/extension-` + strconv.Itoa(i) + `":{}`)
	}
	b.WriteString(`}}`)
	res, sid := initializeAs(t, s, "", b.String())
	wantStatus(t, "initialize with 200 extensions", res, http.StatusOK, CodeInvalidParams)
	if sid != "" || s.Sessions() != 0 || !strings.Contains(res.Error.Message, "capabilities") ||
		!strings.Contains(res.Error.Message, strconv.Itoa(limits.DefaultCapabilityBytes)) {
		t.Fatalf("refusal %+v (session %q, %d held); want -32602 naming capabilities and %d", res.Error, sid, s.Sessions(), limits.DefaultCapabilityBytes)
	}
	small := NewServer(testImpl, &Options{Limits: limits.Limits{CapabilityBytes: 16}})
	t.Cleanup(func() { small.Close() })
	if res, _ := initializeAs(t, small, "", `{"elicitation":{"form":{},"url":{}}}`); res.Error == nil || res.Error.Code != CodeInvalidParams {
		t.Fatalf("capabilities over a 16-byte limit: %s; want -32602", res.rec.body.String())
	}
	if res, _ := initializeAs(t, small, "", `{"roots":{"listChanged":true}}`); res.Error != nil {
		t.Fatalf("capabilities pruned to 12 bytes under a 16-byte limit: %+v", res.Error)
	}
}

// TestPruneCapabilitiesKeepsWhatIsRead: every reader in this package reads
// the same from the pruned object as from the whole one.
func TestPruneCapabilitiesKeepsWhatIsRead(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{"elicitation":{}}`,
		`{"elicitation":{"url":{},"binary":{"maxFileSize":1024,"x":[1,2]},"other":{}},"sampling":{"tools":{}}}`,
		`{"elicitation":null,"sampling":false,"roots":true,"custom":"yes","n":0}`,
		`{"resourceStreaming":{"maxStreamSize":"7"}}`,
		`{"resourceStreaming":{"maxStreamSize":1e3}}`,
		`{"resourceStreaming":{"maxStreamSize":null}}`,
		`{"resourceStreaming":{"maxStreamSize":99999999999999999999}}`,
		`{"resourceStreaming":true}`,
		`{"resourceStreaming":{}}`,
		`{"extensions":{"io.modelcontextprotocol/tasks":{"v":1},"off":false,"gone":null}}`,
		`{"extensions":{"io.modelcontextprotocol/tasks":false}}`,
		`{"extensions":[1]}`,
	} {
		pruned := clientcaps.Prune(json.RawMessage(raw))
		if !json.Valid(pruned) {
			t.Fatalf("%s pruned to invalid JSON %s", raw, pruned)
		}
		whole, kept := &Call{caps: json.RawMessage(raw)}, &Call{caps: pruned}
		ok1, max1 := resstream.Capability(whole.caps)
		ok2, max2 := resstream.Capability(kept.caps)
		if ok1 != ok2 || max1 != max2 {
			t.Errorf("%s → %s: resstream.Capability %v %d; pruned %v %d", raw, pruned, ok1, max1, ok2, max2)
		}
		if whole.hasExtension(ExtTasks) != kept.hasExtension(ExtTasks) {
			t.Errorf("%s → %s: tasks extension differs", raw, pruned)
		}
		for _, name := range []string{"elicitation", "sampling", "roots", "custom", "n", "resourceStreaming", "extensions", "absent"} {
			if whole.HasCapability(name) != kept.HasCapability(name) {
				t.Errorf("%s → %s: HasCapability(%q) differs", raw, pruned, name)
			}
		}
	}
}

// TestSessionsPerPrincipalBounded: 20,000 initializes from one principal
// leave the node holding at most its bound of that principal's sessions, the
// heap with them (71946bf held every one for at least an hour: ~4.4 KB each),
// and the least recently used ones ended (404).
func TestSessionsPerPrincipalBounded(t *testing.T) {
	const bound = 64
	n := 20_000
	if testing.Short() {
		n = 4_000
	}
	s := NewServer(testImpl, &Options{Limits: limits.Limits{SessionsPerPrincipal: bound}})
	t.Cleanup(func() { s.Close() })
	before := heapInUse()
	var first, last string
	for i := range n {
		res, sid := initializeAs(t, s, "mallory", `{}`)
		if res.Error != nil || sid == "" {
			t.Fatalf("initialize %d: %s", i, res.rec.body.String())
		}
		if i == 0 {
			first = sid
		}
		last = sid
	}
	held := s.Sessions()
	grew := int64(heapInUse()) - int64(before)
	if held > bound {
		t.Errorf("%d initializes from one principal: the node holds %d sessions; want at most %d", n, held, bound)
	}
	// The bound's states, and a digest and an expiry per ended id.
	if limit := int64(bound)*8<<10 + int64(n)*128; grew > limit {
		t.Errorf("%d initializes from one principal grew the heap by %d KiB; want at most %d KiB", n, grew>>10, limit>>10)
	}
	if got := s.budgets.Sessions.Held("mallory"); got != int64(held) {
		t.Errorf("the pool counts %d sessions of mallory; the table holds %d", got, held)
	}
	wantStatus(t, "the first, evicted session", clientOf(t, s, "mallory", first).request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	wantStatus(t, "the newest session", clientOf(t, s, "mallory", last).request("ping", "", `{}`), http.StatusOK, 0)
}

// holdGetStream opens c's GET stream on c.s and waits until it is held;
// the stream ends when the session or the server does.
func holdGetStream(t *testing.T, c *testClient) {
	t.Helper()
	go func() {
		h := c.headers("", "")
		h["Accept"] = "text/event-stream"
		c.s.ServeMCP(&Request{Method: http.MethodGet, Header: h, Principal: c.principal}, newRecorder())
	}()
	waitFor(t, "the GET stream to open", func() bool { return c.s.hasGetStream(c.sid) })
}

// TestSessionsAtTheBound: at a principal's bound initialize ends the
// principal's least recently used idle session; with every session busy
// (a GET stream) it is refused with 429 and -32029 naming the limit; at the
// node's bound the node's least recently used idle session goes, and with
// none idle the refusal is 503.
func TestSessionsAtTheBound(t *testing.T) {
	s := NewServer(testImpl, &Options{Limits: limits.Limits{SessionsPerPrincipal: 2, Sessions: 4}})
	t.Cleanup(func() { s.Close() })
	sid := func(principal string) string {
		t.Helper()
		res, sid := initializeAs(t, s, principal, `{}`)
		if res.Error != nil {
			t.Fatalf("initialize for %s: %s", principal, res.rec.body.String())
		}
		return sid
	}
	a1, a2 := sid("alice"), sid("alice")
	wantStatus(t, "alice's first session used", clientOf(t, s, "alice", a1).request("ping", "", `{}`), http.StatusOK, 0)
	a3 := sid("alice") // a2 is alice's least recently used
	wantStatus(t, "alice's evicted session", clientOf(t, s, "alice", a2).request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	holdGetStream(t, clientOf(t, s, "alice", a1))
	holdGetStream(t, clientOf(t, s, "alice", a3))
	res, _ := initializeAs(t, s, "alice", `{}`)
	wantLimit(t, "alice with two busy sessions", res, http.StatusTooManyRequests, "sessions", "principal")
	b1, _ := sid("bob"), sid("bob")
	c1 := sid("carol") // the node's bound: bob's least recently used goes
	wantStatus(t, "bob's evicted session", clientOf(t, s, "bob", b1).request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	holdGetStream(t, clientOf(t, s, "carol", c1))
	if s.Sessions() != 4 {
		t.Fatalf("%d sessions held; want 4", s.Sessions())
	}
	holdGetStream(t, clientOf(t, s, "dave", sid("dave"))) // bob's second session goes
	res, _ = initializeAs(t, s, "erin", `{}`)
	wantLimit(t, "a node full of busy sessions", res, http.StatusServiceUnavailable, "sessions", "node")
	if got := s.budgets.Sessions.Total(); got != int64(s.Sessions()) {
		t.Errorf("the pool counts %d sessions; the table holds %d", got, s.Sessions())
	}
}

// TestRebuiltSessionsCountAndEvictionEndsEverywhere: a node that rebuilds
// sessions it did not mint counts them against the bound, and the session
// it evicts is ended as a DELETE ends it: the node that minted it refuses
// it too.
func TestRebuiltSessionsCountAndEvictionEndsEverywhere(t *testing.T) {
	kr, err := token.NewKeyring(token.Key{ID: "k", Secret: bytes.Repeat([]byte{3}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	live := &sharedLive{}
	a := NewServer(testImpl, &Options{Keyring: kr, LiveSessions: live})
	b := NewServer(testImpl, &Options{Keyring: kr, LiveSessions: live, Limits: limits.Limits{SessionsPerPrincipal: 1}})
	t.Cleanup(func() { a.Close(); b.Close() })
	s1 := newLegacyClientAs(t, a, "alice")
	s2 := newLegacyClientAs(t, a, "alice")
	wantStatus(t, "s1 on B", s1.on(b).request("ping", "", `{}`), http.StatusOK, 0)
	wantStatus(t, "s2 on B, B at its bound", s2.on(b).request("ping", "", `{}`), http.StatusOK, 0)
	if b.Sessions() != 1 || b.budgets.Sessions.Held("alice") != 1 {
		t.Fatalf("B holds %d sessions (%d counted); want 1", b.Sessions(), b.budgets.Sessions.Held("alice"))
	}
	wantStatus(t, "s1, evicted by B, on A", s1.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	wantStatus(t, "s2 on A", s2.request("ping", "", `{}`), http.StatusOK, 0)
	if live.records() != 1 {
		t.Errorf("%d session records; want 1 (s2)", live.records())
	}
}

// TestLiveSessionRecords: a session's record exists from initialize to
// DELETE, so after a storm of sessions begun and ended the records are those
// of the live sessions only; initialize's record write counts against
// Limits.ClaimsPerMinute (429 with Retry-After beyond it), and a record that
// cannot be written answers 503 and holds nothing.
func TestLiveSessionRecords(t *testing.T) {
	live := &sharedLive{}
	s := NewServer(testImpl, &Options{LiveSessions: live, Limits: limits.Limits{ClaimsPerMinute: 40}})
	t.Cleanup(func() { s.Close() })
	var kept []*testClient
	for i := range 30 {
		c := newLegacyClient(t, s)
		if i%10 == 0 {
			kept = append(kept, c)
			continue
		}
		wantStatus(t, "DELETE", c.deleteSession(), http.StatusOK, 0)
	}
	if live.records() != len(kept) {
		t.Fatalf("%d session records after 30 sessions, %d of them still live", live.records(), len(kept))
	}
	for _, c := range kept {
		wantStatus(t, "a live session", c.request("ping", "", `{}`), http.StatusOK, 0)
	}
	for range 10 {
		initializeAs(t, s, "", `{}`)
	}
	res, _ := initializeAs(t, s, "", `{}`)
	wantLimit(t, "the 41st record in a minute", res, http.StatusTooManyRequests, "claims_per_minute", "principal")
	if res, _ := initializeAs(t, s, "other", `{}`); res.Error != nil {
		t.Fatalf("another principal's initialize: %+v", res.Error)
	}
	held := s.Sessions()
	live.setFail(errors.New("store down"))
	res, sid := initializeAs(t, s, "other", `{}`)
	wantStatus(t, "initialize while the record fails", res, http.StatusServiceUnavailable, CodeInternalError)
	if sid != "" || s.Sessions() != held || s.budgets.Sessions.Total() != int64(held) {
		t.Errorf("a failed initialize left a session (%q; %d held, was %d)", sid, s.Sessions(), held)
	}
}

// TestSessionIdsWithoutRecordRefused: an id of the former purpose (minted
// before live records, so no node records its end) is refused with 404,
// and without a shared record the node's own table is the record: no
// claims are charged and DELETE still ends the session.
func TestSessionIdsWithoutRecordRefused(t *testing.T) {
	kr := token.NewRandomKeyring()
	s := NewServer(testImpl, &Options{Keyring: kr, LiveSessions: &sharedLive{}})
	t.Cleanup(func() { s.Close() })
	old, err := kr.Sign(token.Claims{Purpose: "mcp-session", Object: Version20251125, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "an id of the former purpose", clientOf(t, s, "", old).request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)

	local := NewServer(testImpl, &Options{Limits: limits.Limits{ClaimsPerMinute: 1}})
	t.Cleanup(func() { local.Close() })
	c := newLegacyClient(t, local)
	newLegacyClient(t, local) // no record written: nothing charged
	wantStatus(t, "DELETE without a shared record", c.deleteSession(), http.StatusOK, 0)
	wantStatus(t, "the ended session", c.request("ping", "", `{}`), http.StatusNotFound, CodeSessionNotFound)
	wantStatus(t, "DELETE again", c.deleteSession(), http.StatusNotFound, CodeSessionNotFound)
}

// TestSessionUnitsBalanced: sessions begun, used, evicted, ended and
// rebuilt concurrently on two nodes leave each node's pool counting
// exactly the states its table holds (a unit given back twice panics).
func TestSessionUnitsBalanced(t *testing.T) {
	kr := token.NewRandomKeyring()
	live := &sharedLive{}
	lim := limits.Limits{SessionsPerPrincipal: 4, Sessions: 6}
	a := NewServer(testImpl, &Options{Keyring: kr, LiveSessions: live, Limits: lim})
	b := NewServer(testImpl, &Options{Keyring: kr, LiveSessions: live, Limits: lim})
	t.Cleanup(func() { a.Close(); b.Close() })
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			principal := "p" + strconv.Itoa(w%3)
			for i := range 60 {
				res, sid := initializeAs(t, a, principal, `{}`)
				if res.Error != nil {
					continue // a limit: every other session of the node busy
				}
				c := clientOf(t, b, principal, sid)
				c.request("ping", "", `{}`)
				if i%2 == 0 {
					c.deleteSession()
				}
			}
		})
	}
	wg.Wait()
	for _, s := range []*Server{a, b} {
		if got := s.budgets.Sessions.Total(); got != int64(s.Sessions()) || got > lim.Sessions {
			t.Errorf("the pool counts %d sessions; the table holds %d (bound %d)", got, s.Sessions(), lim.Sessions)
		}
	}
}
