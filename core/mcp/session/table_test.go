package session

import (
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
