package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// claimer returns b's Claimer, and skips the test when b has none: every
// store of this repository has one (localfs and s3 assert it at compile
// time), but a view of a store (storage/namespace) leaves claims on the
// store it views.
func claimer(t *testing.T, b storage.Backend) storage.Claimer {
	t.Helper()
	c, ok := b.(storage.Claimer)
	if !ok {
		t.Skipf("%T does not implement storage.Claimer", b)
	}
	return c
}

// testClaims: a claim is taken once, released, taken again, invisible to
// List, and swept only after it expires; Claimed tells the truth at each
// step.
func (s Suite) testClaims(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	cl := claimer(t, b)
	now := time.Now()
	live := storage.Claim{Set: "test", Name: "live-1", Expires: now.Add(time.Hour)}
	old := storage.Claim{Set: "test", Name: "old_1", Expires: now.Add(-time.Minute)}
	for _, c := range []storage.Claim{live, old} {
		wantClaimed(t, cl, "before Claim", c, false)
		if err := cl.Claim(ctx, c); err != nil {
			t.Fatalf("Claim(%s): %v", c.Name, err)
		}
		wantClaimed(t, cl, "after Claim", c, true)
		wantErr(t, "second Claim("+c.Name+")", cl.Claim(ctx, c), storage.ErrExists)
	}
	// The expiry is part of a claim's identity.
	wantClaimed(t, cl, "with another expiry", storage.Claim{Set: live.Set, Name: live.Name, Expires: now.Add(2 * time.Hour)}, false)
	wantClaimed(t, cl, "in another set", storage.Claim{Set: "other", Name: live.Name, Expires: live.Expires}, false)
	if err := cl.Release(ctx, live); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantClaimed(t, cl, "after Release", live, false)
	if err := cl.Release(ctx, live); err != nil {
		t.Fatalf("Release of a released claim: %v", err)
	}
	if err := cl.Claim(ctx, live); err != nil {
		t.Fatalf("Claim after Release: %v", err)
	}
	if keys := listKeys(t, b, "", 0); len(keys) != 0 {
		t.Fatalf("List shows claims: %q", keys)
	}
	n, err := cl.SweepClaims(ctx, "test", now)
	if err != nil || n != 1 {
		t.Fatalf("SweepClaims = %d, %v; want 1 expired claim removed", n, err)
	}
	wantClaimed(t, cl, "after the sweep", old, false)
	wantClaimed(t, cl, "live after the sweep", live, true)
	if err := cl.Claim(ctx, old); err != nil {
		t.Fatalf("Claim of a swept claim: %v", err)
	}
	wantErr(t, "Claim of a live claim after the sweep", cl.Claim(ctx, live), storage.ErrExists)
	for _, bad := range []storage.Claim{{Set: "a/b", Name: "x", Expires: now}, {Set: "s", Name: "../x", Expires: now}, {Set: "s", Name: "x"}} {
		if err := cl.Claim(ctx, bad); err == nil {
			t.Errorf("Claim(%+v) succeeded; want an error", bad)
		}
		if _, err := cl.Claimed(ctx, bad); err == nil {
			t.Errorf("Claimed(%+v) succeeded; want an error", bad)
		}
	}
}

// wantClaimed fails the test unless Claimed(c) answers want without error.
func wantClaimed(t *testing.T, cl storage.Claimer, when string, c storage.Claim, want bool) {
	t.Helper()
	got, err := cl.Claimed(context.Background(), c)
	if err != nil || got != want {
		t.Fatalf("Claimed(%s/%s) %s = %v, %v; want %v", c.Set, c.Name, when, got, err, want)
	}
}

// testConcurrentClaims: of many concurrent claims of one name exactly one
// wins, for each of several names.
func (s Suite) testConcurrentClaims(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	cl := claimer(t, b)
	const names, racers = 4, 8
	exp := time.Now().Add(time.Hour)
	var wg sync.WaitGroup
	wins := make([]int, names)
	var mu sync.Mutex
	for n := range names {
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := cl.Claim(ctx, storage.Claim{Set: "race", Name: fmt.Sprintf("n%d", n), Expires: exp})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins[n]++
				case !errors.Is(err, storage.ErrExists):
					t.Errorf("Claim: %v", err)
				}
			}()
		}
	}
	wg.Wait()
	for n, w := range wins {
		if w != 1 {
			t.Errorf("name n%d: %d winners of %d racers; want exactly 1", n, w, racers)
		}
		wantClaimed(t, cl, "after the race", storage.Claim{Set: "race", Name: fmt.Sprintf("n%d", n), Expires: exp}, true)
	}
}
