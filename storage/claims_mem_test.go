package storage

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMemClaimsBound: the in-process fallback refuses new claims when full
// instead of forgetting used ones, and expired claims make room.
func TestMemClaimsBound(t *testing.T) {
	t.Parallel()
	var m MemClaims
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	for i := range MaxMemClaims {
		if err := m.Claim(ctx, Claim{Set: "s", Name: fmt.Sprint(i), Expires: exp}); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	if err := m.Claim(ctx, Claim{Set: "s", Name: "more", Expires: exp}); err != ErrClaimsFull {
		t.Fatalf("a full set took a new claim: %v", err)
	}
	if err := m.Claim(ctx, Claim{Set: "s", Name: "7", Expires: exp}); err != ErrExists {
		t.Fatalf("a used claim was taken again: %v", err)
	}
	if n, _ := m.SweepClaims(ctx, "s", exp.Add(time.Second)); n != MaxMemClaims {
		t.Fatalf("sweep removed %d; want %d", n, MaxMemClaims)
	}
}

// TestMemClaimsClaimed: Claimed sees a claim from Claim until Release or a
// sweep past its expiry.
func TestMemClaimsClaimed(t *testing.T) {
	t.Parallel()
	var m MemClaims
	ctx := context.Background()
	c := Claim{Set: "s", Name: "n", Expires: time.Now().Add(time.Hour)}
	claimed := func(when string, want bool) {
		t.Helper()
		if got, err := m.Claimed(ctx, c); err != nil || got != want {
			t.Fatalf("Claimed %s = %v, %v; want %v", when, got, err, want)
		}
	}
	claimed("before Claim", false)
	if err := m.Claim(ctx, c); err != nil {
		t.Fatal(err)
	}
	claimed("after Claim", true)
	if err := m.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	claimed("after Release", false)
	if err := m.Claim(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SweepClaims(ctx, "s", c.Expires.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	claimed("after the sweep", false)
	if _, err := m.Claimed(ctx, Claim{Set: "s/x", Name: "n", Expires: c.Expires}); err == nil {
		t.Error("Claimed of a bad claim succeeded")
	}
}

// TestMemClaimsSweepOneSet: a sweep removes the expired claims of its set
// only, as the Claimer interface says.
func TestMemClaimsSweepOneSet(t *testing.T) {
	t.Parallel()
	var m MemClaims
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	for _, set := range []string{"links", "uploads"} {
		if err := m.Claim(ctx, Claim{Set: set, Name: "n", Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := m.SweepClaims(ctx, "links", exp.Add(time.Second)); n != 1 {
		t.Fatalf("sweep of links removed %d; want 1", n)
	}
	if ok, _ := m.Claimed(ctx, Claim{Set: "uploads", Name: "n", Expires: exp}); !ok {
		t.Error("a sweep of links removed a claim of uploads")
	}
}
