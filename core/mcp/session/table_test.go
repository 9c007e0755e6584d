package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
)

func TestTableKnownRevokeAndRebuild(t *testing.T) {
	var tb Table
	exp := time.Now().Add(time.Hour)
	a := New("sid-a", "2025-11-25", nil, exp)
	a.Principal = "alice"
	tb.Add(a)
	if tb.Known("sid-a", "alice") != a {
		t.Fatal("a held session is not known to its principal")
	}
	if tb.Known("sid-a", "bob") != nil || tb.Known("sid-b", "alice") != nil {
		t.Fatal("a session is known to another principal, or an unheld id is known")
	}
	rebuilt, _, _ := tb.Get("sid-b", func() *State { return New("sid-b", "2025-11-25", nil, exp) })
	if rebuilt == nil || tb.Lookup("sid-b") != rebuilt || tb.Len() != 2 {
		t.Fatalf("Get did not hold the rebuilt state (len %d)", tb.Len())
	}
	if sess, fresh := tb.Revoke("sid-a", exp); sess != a || !fresh {
		t.Fatalf("first Revoke: %v %v", sess, fresh)
	}
	if _, fresh := tb.Revoke("sid-a", exp); fresh {
		t.Fatal("second Revoke reported a fresh revocation")
	}
	if again, _, _ := tb.Get("sid-a", func() *State { return a }); tb.Known("sid-a", "alice") != nil || again != nil {
		t.Fatal("a revoked id is still served")
	}
	old := New("sid-old", "2025-11-25", nil, time.Now().Add(-time.Second))
	tb.Add(old)
	if again, _, _ := tb.Get("sid-old", func() *State { return old }); tb.Known("sid-old", "") != nil || again != nil {
		t.Fatal("an expired state is still served")
	}
}

// TestTableEvictsLeastRecentlyUsedIdle: each held state, minted or
// rebuilt, takes one unit of its principal; at the principal's bound the
// principal's least recently used idle session is evicted (and revoked),
// at the node's bound the node's; busy sessions (a GET stream, a request in
// flight) are never evicted, and with none idle the pool's refusal is
// returned. Every way out of the table gives the unit back.
func TestTableEvictsLeastRecentlyUsedIdle(t *testing.T) {
	pool := budget.NewPool(budget.Limit{Name: "sessions", PerPrincipal: 2, PerNode: 3}, nil)
	tb := NewTable(pool, nil)
	exp := time.Now().Add(time.Hour)
	mk := func(id, principal string) *State {
		s := New(id, "2025-11-25", nil, exp)
		s.Principal = principal
		return s
	}
	add := func(id, principal string) ([]*State, error) { return tb.Add(mk(id, principal)) }
	check := func(step string) {
		t.Helper()
		if int64(tb.Len()) != pool.Total() {
			t.Fatalf("%s: %d states held, %d units taken", step, tb.Len(), pool.Total())
		}
	}
	ids := func(states []*State) (out []string) {
		for _, s := range states {
			out = append(out, s.ID)
		}
		return out
	}
	add("a1", "alice")
	add("a2", "alice")
	tb.Known("a1", "alice") // a2 is now alice's least recently used
	if ev, err := add("a3", "alice"); err != nil || !slices.Equal(ids(ev), []string{"a2"}) || !tb.Ended("a2") {
		t.Fatalf("third session of alice: evicted %v, %v; want a2, revoked", ids(ev), err)
	}
	check("after evicting a2")
	tb.Lookup("a1").ClaimGetStream()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tb.Lookup("a3").Track(json.RawMessage(`1`), cancel)
	var e *budget.Exceeded
	if ev, err := add("a4", "alice"); len(ev) != 0 || !errors.As(err, &e) || e.Scope != budget.PerPrincipal || tb.Lookup("a4") != nil {
		t.Fatalf("alice with two busy sessions: evicted %v, %v; want the principal's refusal", ids(ev), err)
	}
	check("after refusing a4")
	add("b1", "bob")
	if ev, err := add("b2", "bob"); err != nil || !slices.Equal(ids(ev), []string{"b1"}) {
		t.Fatalf("node at its bound: evicted %v, %v; want b1, the node's least recently used idle", ids(ev), err)
	}
	rebuilt, ev, err := tb.Get("c1", func() *State { return mk("c1", "carol") })
	if err != nil || rebuilt == nil || !slices.Equal(ids(ev), []string{"b2"}) {
		t.Fatalf("a rebuilt state at the node's bound: evicted %v, %v; want b2", ids(ev), err)
	}
	check("after rebuilding c1")
	tb.Lookup("c1").ClaimGetStream()
	if _, ev, err := tb.Get("d1", func() *State { return mk("d1", "dave") }); len(ev) != 0 || !errors.As(err, &e) || e.Scope != budget.PerNode {
		t.Fatalf("node full of busy sessions: evicted %v, %v; want the node's refusal", ids(ev), err)
	}
	tb.Revoke("a1", exp)
	tb.Forget("c1")
	check("after Revoke and Forget")
	if pool.Held("alice") != 1 || pool.Held("carol") != 0 || ctx.Err() != nil {
		t.Fatalf("units held: alice %d, carol %d", pool.Held("alice"), pool.Held("carol"))
	}
}

// TestTableClosesWhatItDrops: a state the table drops on its own (expired,
// found by Known; idle or expired, found by the sweep) is closed, so its
// subscriptions are given back.
func TestTableClosesWhatItDrops(t *testing.T) {
	var tb Table
	b := testBudget(0)
	expired := New("sid-exp", "2025-11-25", nil, time.Now().Add(-time.Second))
	tb.Add(expired)
	if err := expired.Subscribe("blob:///x", true, b); err != nil {
		t.Fatal(err)
	}
	if tb.Known("sid-exp", "") != nil || tb.Len() != 0 {
		t.Fatalf("Known served an expired state or kept it (len %d)", tb.Len())
	}
	swept := New("sid-swept", "2025-11-25", nil, time.Now().Add(-time.Second))
	tb.Add(swept)
	if err := swept.Subscribe("blob:///y", true, b); err != nil {
		t.Fatal(err)
	}
	for i := range 255 { // the 256th addition sweeps
		tb.Add(New("sid-"+strconv.Itoa(i), "2025-11-25", nil, time.Now().Add(time.Hour)))
	}
	if tb.Lookup("sid-swept") != nil {
		t.Fatal("the sweep kept an expired state")
	}
	if n, _ := b.held(); n != 0 {
		t.Fatalf("%d subscriptions still charged to dropped states", n)
	}
	for _, s := range []*State{expired, swept} {
		select {
		case <-s.Done():
		default:
			t.Fatalf("%s left the table unclosed", s.ID)
		}
	}
}
