package session

import (
	"strconv"
	"testing"
	"time"
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
	rebuilt := tb.Get("sid-b", func() *State { return New("sid-b", "2025-11-25", nil, exp) })
	if rebuilt == nil || tb.Lookup("sid-b") != rebuilt || tb.Len() != 2 {
		t.Fatalf("Get did not hold the rebuilt state (len %d)", tb.Len())
	}
	if sess, fresh, _ := tb.Revoke("sid-a", exp); sess != a || !fresh {
		t.Fatalf("first Revoke: %v %v", sess, fresh)
	}
	if _, fresh, _ := tb.Revoke("sid-a", exp); fresh {
		t.Fatal("second Revoke reported a fresh revocation")
	}
	if tb.Known("sid-a", "alice") != nil || tb.Get("sid-a", func() *State { return a }) != nil {
		t.Fatal("a revoked id is still served")
	}
	old := New("sid-old", "2025-11-25", nil, time.Now().Add(-time.Second))
	tb.Add(old)
	if tb.Known("sid-old", "") != nil || tb.Get("sid-old", func() *State { return old }) != nil {
		t.Fatal("an expired state is still served")
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
