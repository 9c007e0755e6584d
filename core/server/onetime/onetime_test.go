package onetime

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// TestLiveSessions: a session's record, begun once, is seen by Facts on
// the same store until it is ended (ending again is no error), and is named
// by a digest that is a valid claim name and contains nothing of the id.
func TestLiveSessions(t *testing.T) {
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.DiscardHandler)
	a, b := New(st, log).LiveSessions(), New(st, log).LiveSessions()
	if a == nil || b == nil {
		t.Fatal("no LiveSessions on a store with claims")
	}
	ctx := context.Background()
	id := "session-id." + strings.Repeat("x", 300)
	exp := time.Now().Add(time.Hour)
	if live, err := b.Live(ctx, id, exp); err != nil || live {
		t.Fatalf("Live before Begin = %v, %v", live, err)
	}
	if err := a.Begin(ctx, id, exp); err != nil {
		t.Fatal(err)
	}
	if live, err := b.Live(ctx, id, exp); err != nil || !live {
		t.Fatalf("Live after Begin = %v, %v", live, err)
	}
	if err := b.End(ctx, id, exp); err != nil {
		t.Fatal(err)
	}
	if live, err := a.Live(ctx, id, exp); err != nil || live {
		t.Fatalf("Live after End = %v, %v", live, err)
	}
	if err := a.End(ctx, id, exp); err != nil {
		t.Fatalf("second End: %v; want nil", err)
	}
	name := SessionName(id)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(name) {
		t.Errorf("SessionName = %q; want 32 hex digits", name)
	}
	if _, err := (storage.Claim{Set: Sessions, Name: name, Expires: exp}).Path(); err != nil {
		t.Errorf("SessionName is no claim name: %v", err)
	}
}

// TestLiveSessionsInProcess: without the store's claims there is no shared
// record to offer.
func TestLiveSessionsInProcess(t *testing.T) {
	if l := New(struct{ storage.Backend }{}, slog.New(slog.DiscardHandler)).LiveSessions(); l != nil {
		t.Errorf("LiveSessions of in-process claims = %v; want nil", l)
	}
}

// TestSweepCoversEverySet: a sweep removes the expired facts of each set,
// session records included, and keeps the live ones.
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
