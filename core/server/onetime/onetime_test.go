package onetime

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// TestSessionEnds: a session's end is claimed once, seen by Facts on the
// same store, and named by a digest that is a valid claim name and
// contains nothing of the id.
func TestSessionEnds(t *testing.T) {
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.DiscardHandler)
	a, b := New(st, log).SessionEnds(), New(st, log).SessionEnds()
	if a == nil || b == nil {
		t.Fatal("no SessionEnds on a store with claims")
	}
	ctx := context.Background()
	id := "session-id." + strings.Repeat("x", 300)
	exp := time.Now().Add(time.Hour)
	if ended, err := b.SessionEnded(ctx, id, exp); err != nil || ended {
		t.Fatalf("SessionEnded before the end = %v, %v", ended, err)
	}
	if err := a.EndSession(ctx, id, exp); err != nil {
		t.Fatal(err)
	}
	if ended, err := b.SessionEnded(ctx, id, exp); err != nil || !ended {
		t.Fatalf("SessionEnded after the end = %v, %v", ended, err)
	}
	if err := b.EndSession(ctx, id, exp); !errors.Is(err, mcp.ErrSessionEnded) {
		t.Fatalf("second EndSession: %v; want mcp.ErrSessionEnded", err)
	}
	name := SessionName(id)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(name) {
		t.Errorf("SessionName = %q; want 32 hex digits", name)
	}
	if _, err := (storage.Claim{Set: Sessions, Name: name, Expires: exp}).Path(); err != nil {
		t.Errorf("SessionName is no claim name: %v", err)
	}
}

// TestSessionEndsInProcess: without the store's claims there is no shared
// record to offer.
func TestSessionEndsInProcess(t *testing.T) {
	if e := New(struct{ storage.Backend }{}, slog.New(slog.DiscardHandler)).SessionEnds(); e != nil {
		t.Errorf("SessionEnds of in-process claims = %v; want nil", e)
	}
}

// TestSweepCoversEverySet: a sweep removes the expired facts of each set,
// ended sessions included, and keeps the live ones.
func TestSweepCoversEverySet(t *testing.T) {
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := New(st, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	old, live := time.Now().Add(-Grace-time.Hour), time.Now().Add(time.Hour)
	for _, set := range []string{Links, Uploads, Sessions} {
		for _, exp := range []time.Time{old, live} {
			if err := f.Claim(ctx, set, "n"+exp.Format("150405"), exp); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.Sweep(sweepCtx); close(done) }()
	defer func() { stop(); <-done }()
	for _, set := range []string{Links, Uploads, Sessions} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			still, err := f.claims.Claimed(ctx, claimOf(set, "n"+old.Format("150405"), old))
			if err != nil {
				t.Fatal(err)
			}
			if !still {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the expired fact of %s was not swept", set)
			}
		}
		if kept, err := f.claims.Claimed(ctx, claimOf(set, "n"+live.Format("150405"), live)); err != nil || !kept {
			t.Errorf("the live fact of %s: claimed %v, %v; want kept", set, kept, err)
		}
	}
}
