package s3

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestStagedVariants: staged writes with signed parts, and with
// StagedCommit (a staging key copied at commit), pass the suite's tests.
func TestStagedVariants(t *testing.T) {
	for name, opts := range map[string]Options{"signed": {SignPayloads: true}, "staged-commit": {StagedCommit: true}} {
		t.Run(name, func(t *testing.T) {
			opts.PartSize = testPartSize
			storagetest.Suite{New: func(t *testing.T) storage.Backend { return newStore(t, opts) }, PartSize: testPartSize}.RunStaged(t)
		})
	}
}

// TestStaleKeepsLiveStaged: Open's removal of stale uploads aborts a
// staged write whose parts are all older than StaleAfter and keeps one
// begun as long ago that has a younger part (a resumable upload in use).
// The margins are wide because S3 stamps parts to the whole second (a
// part can look up to a second older than it is) and a loaded race run
// can take seconds between the live part and the other node's Open.
func TestStaleKeepsLiveStaged(t *testing.T) {
	const staleAfter = 4 * time.Second
	ctx := t.Context()
	s := newStore(t, Options{})
	data := bytes.Repeat([]byte("x"), 100)
	idle, err := s.BeginStaged(ctx, "idle", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.BeginStaged(ctx, "live", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutStaged(ctx, idle, 1, 0, data); err != nil {
		t.Fatal(err)
	}
	time.Sleep(staleAfter + 2*time.Second)
	part, err := s.PutStaged(ctx, live, 1, 0, data)
	if err != nil {
		t.Fatal(err)
	}
	other := newStore(t, Options{Bucket: s.bucket, StaleAfter: staleAfter}) // a node starting
	sum := sha256.Sum256(data)
	if _, err := other.CommitStaged(ctx, live, []storage.StagedPart{part}, storage.CreateOptions{}, hex.EncodeToString(sum[:])); err != nil {
		t.Fatalf("the staged write in use was removed: %v", err)
	}
	if _, err := other.PutStaged(ctx, idle, 2, 100, data); !errors.Is(err, storage.ErrStagedGone) {
		t.Fatalf("PutStaged to the idle staged write after Open: %v; want ErrStagedGone", err)
	}
}
