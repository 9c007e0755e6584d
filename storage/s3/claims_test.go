package s3

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// TestClaimExactUnderConcurrency: claims rely on the service honouring
// If-None-Match: * atomically. Two Stores (two clients, as two nodes would
// have) race racers goroutines on one claim name per round, all released
// together; in every round exactly one Claim succeeds and every other one
// gets storage.ErrExists. Half the rounds race on a name that was claimed
// and released just before, the case of a single-use link whose claim was
// swept.
func TestClaimExactUnderConcurrency(t *testing.T) {
	const rounds, racers = 24, 12
	a := newStore(t, Options{})
	b := newStore(t, Options{Bucket: a.bucket})
	stores := []*Store{a, b}
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	start := time.Now()
	defer func() {
		t.Logf("%d rounds of %d racers in %v", rounds, racers, time.Since(start).Round(time.Millisecond))
	}()
	for round := range rounds {
		c := storage.Claim{Set: "race", Name: "r" + strconv.Itoa(round), Expires: exp}
		if round%2 == 1 {
			if err := a.Claim(ctx, c); err != nil {
				t.Fatal(err)
			}
			if err := b.Release(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		start := make(chan struct{})
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start
				errs[i] = stores[i%2].Claim(ctx, c)
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, storage.ErrExists):
				t.Errorf("round %d: Claim: %v", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d of %d racing Claims succeeded, want exactly 1", round, wins, racers)
		}
	}
}
