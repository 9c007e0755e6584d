package resumable

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// TestOneSweeperPerRound: of nodes sharing a store with claims, exactly
// one sweeps each round, however many ask at once; the next round has its
// own sweeper, and a store without claims lets every node sweep.
func TestOneSweeperPerRound(t *testing.T) {
	store, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	nodes := make([]*Server, 8)
	for i := range nodes {
		nodes[i] = New(Env{Backend: store, MaxUpload: 1 << 20})
	}
	now := time.Unix(1_800_000_000, 0)
	for round := range 3 {
		at := now.Add(time.Duration(round) * onetime.SweepEvery)
		var mu sync.Mutex
		var wg sync.WaitGroup
		sweepers := 0
		for _, n := range nodes {
			wg.Go(func() {
				if n.sweepTurn(context.Background(), at) {
					mu.Lock()
					sweepers++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if sweepers != 1 {
			t.Fatalf("round %d: %d nodes sweep, want 1", round, sweepers)
		}
	}
	bare := New(Env{Backend: struct{ storage.Backend }{store}, MaxUpload: 1 << 20})
	for range 2 {
		if !bare.sweepTurn(context.Background(), now) {
			t.Fatal("on a store without claims a node does not sweep")
		}
	}
}

// TestSweepRoundRunsAlsoSweep: the round a node sweeps runs Env.AlsoSweep
// (the SEP-2631 file records') after the uploads, so the file records are
// swept by one node per round too.
func TestSweepRoundRunsAlsoSweep(t *testing.T) {
	store, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs := 0
	s := New(Env{Backend: store, MaxUpload: 1 << 20, AlsoSweep: func(context.Context) (int, error) { runs++; return 0, nil }})
	s.SweepOnce(context.Background())
	if runs != 1 {
		t.Fatalf("a sweep round ran AlsoSweep %d times, want 1", runs)
	}
}
