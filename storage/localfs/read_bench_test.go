package localfs

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// BenchmarkSmallRead is the per-request cost of serving a 4 KiB object:
// Stat, Open, read it all, Close.
func BenchmarkSmallRead(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const key = "res/small.txt"
	w, err := s.Create(ctx, key, storage.CreateOptions{MediaType: "text/plain"})
	if err == nil {
		_, err = io.WriteString(w, strings.Repeat("x", 4096))
	}
	if err == nil {
		_, err = w.Commit(ctx)
	}
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 8192)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Stat(ctx, key); err != nil {
			b.Fatal(err)
		}
		r, _, err := s.Open(ctx, key, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, buf[:4096]); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkClaimed is the per-request ended-session check: a claim that
// does not exist, in a store that has never made one.
func BenchmarkClaimed(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := storage.Claim{Set: "ended", Name: "session1", Expires: time.Unix(2_000_000_000, 0)}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := s.Claimed(ctx, c); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestClaimedSeesClaimsAfterAbsence checks that a set first seen absent
// (and so recorded absent) is held once Claim creates its folder.
func TestClaimedSeesClaimsAfterAbsence(t *testing.T) {
	ctx := t.Context()
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storage.Claim{Set: "ended", Name: "s1", Expires: time.Unix(2_000_000_000, 0)}
	for i, step := range []struct {
		do   func() error
		want bool
	}{
		{func() error { return nil }, false},
		{func() error { return s.Claim(ctx, c) }, true},
		{func() error { return s.Release(ctx, c) }, false},
		{func() error { return s.Claim(ctx, c) }, true},
	} {
		if err := step.do(); err != nil {
			t.Fatal(i, err)
		}
		if got, err := s.Claimed(ctx, c); got != step.want || err != nil {
			t.Fatalf("step %d: Claimed = %v, %v; want %v", i, got, err, step.want)
		}
	}
}
