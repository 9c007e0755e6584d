//go:build linux

package localfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestStreamedPartKeepsItsFile: the pieces of a part streamed by
// WriteStaged share one open file, which its SyncStaged closes, as
// AbortStaged does for a part never synced; a write after the abort finds
// the staged write gone.
func TestStreamedPartKeepsItsFile(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.BeginStaged(ctx, "kept", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := openFiles(t)
	piece := make([]byte, 1000)
	for i := range 4 {
		if err := s.WriteStaged(ctx, id, 1, int64(i*len(piece)), piece); err != nil {
			t.Fatal(err)
		}
		if n := openFiles(t); n != base+1 {
			t.Fatalf("after piece %d: %d files open, want %d (the part's, kept)", i, n, base+1)
		}
	}
	if _, err := s.SyncStaged(ctx, id, 1, 0, int64(4*len(piece))); err != nil {
		t.Fatal(err)
	}
	if n := openFiles(t); n != base {
		t.Fatalf("after SyncStaged: %d files open, want %d", n, base)
	}
	if err := s.WriteStaged(ctx, id, 2, int64(4*len(piece)), piece); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortStaged(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := openFiles(t); n != base {
		t.Fatalf("after AbortStaged: %d files open, want %d", n, base)
	}
	if err := s.WriteStaged(ctx, id, 3, int64(5*len(piece)), piece); !errors.Is(err, storage.ErrStagedGone) {
		t.Fatalf("WriteStaged after AbortStaged: %v, want ErrStagedGone", err)
	}
}

// Parts cut in the middle (WriteStaged with no SyncStaged after it) keep
// at most maxKeptStaged files open together: uploads abandoned mid-part
// cannot hold a descriptor each.
func TestKeptStagedFilesBounded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := openFiles(t)
	piece := make([]byte, 100)
	for i := range maxKeptStaged + 40 {
		id, err := s.BeginStaged(ctx, fmt.Sprintf("cut/%d", i), storage.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteStaged(ctx, id, 1, 0, piece); err != nil {
			t.Fatal(err)
		}
	}
	if n := openFiles(t); n > base+maxKeptStaged {
		t.Fatalf("%d staged files open after %d parts cut mid-way, want at most %d", n-base, maxKeptStaged+40, maxKeptStaged)
	}
}
