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
