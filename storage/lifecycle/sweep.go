package lifecycle

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// SweepSet is the claim set of the sweep rounds: one claim per round, so
// that one node sweeps a round.
const SweepSet = "lifecycle-sweep"

// Sweeper defaults.
const (
	DefaultSweepEvery = time.Minute
	DefaultSweepList  = 1000
	DefaultSweepMax   = 200
)

// Sweeper deletes expired blobs, a bounded amount per round, one node per
// round across a cluster (see SweepOnce).
type Sweeper struct {
	// Store is the store as the server sees it: listed through Unwrap
	// when it is a lifecycle Backend (so expired blobs show), deleted
	// through itself, the server's one delete path.
	Store storage.Backend
	// Policy says what expired.
	Policy *Policy
	// Every is the length of a round (default DefaultSweepEvery).
	Every time.Duration
	// List bounds the objects a round looks at (default
	// DefaultSweepList); Max the blobs it deletes (default
	// DefaultSweepMax). The next round goes on where one stopped.
	List, Max int
	// Delete, when set, deletes instead of Store.Delete (the server's
	// backend as finally wrapped; tests).
	Delete func(ctx context.Context, key string) error
	// Swept, when set, is told of every blob removed (metrics).
	Swept func(info storage.Info)
	// Observe, when set, is told of every round Run did (metrics).
	Observe func(r Round, err error)
	// Stale, when set, is asked in each round this node sweeps to remove
	// what crashed writers left (the raw store's storage.StaleRemover:
	// S3's incomplete multipart uploads), before the expired blobs.
	Stale storage.StaleRemover
	// Log receives failures; nil discards them.
	Log *slog.Logger

	mu     sync.Mutex
	cursor string // where the next round lists from, "" the start
}

// Round is what one SweepOnce did.
type Round struct {
	Turn    bool  // this node won the round's claim (or the store has no claims)
	Listed  int   // objects looked at
	Removed int   // expired blobs deleted
	Bytes   int64 // their sizes
	Done    bool  // the listing reached the end of the store
	Stale   int   // leftovers of crashed writers removed (Sweeper.Stale)
}

func (s *Sweeper) every() time.Duration { return cmp.Or(s.Every, DefaultSweepEvery) }

// source is the store with its expired blobs showing.
func (s *Sweeper) source() storage.Backend {
	if w, ok := s.Store.(interface{ Unwrap() storage.Backend }); ok {
		return w.Unwrap()
	}
	return s.Store
}

// Run sweeps once a round until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.every())
	defer t.Stop()
	for {
		r, err := s.SweepOnce(ctx)
		if err != nil && ctx.Err() == nil && s.Log != nil {
			s.Log.Error("lifecycle: sweeping expired blobs failed", "err", err)
		}
		if s.Observe != nil && ctx.Err() == nil {
			s.Observe(r, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepOnce sweeps the round of the policy's now, if this node wins the
// round's claim (a claim "round-<start>" in SweepSet, created only if
// absent: of all the nodes sharing the store exactly one gets it). The
// sweep ends with its round: its context's deadline is the round's end,
// so the next round's sweeper, on this node or another, never runs beside
// it (with the nodes' clocks agreeing). A store without claims is one
// node's: it sweeps every round.
func (s *Sweeper) SweepOnce(ctx context.Context) (Round, error) {
	now := s.Policy.now()
	every := s.every()
	round := now.Truncate(every)
	turn, err := s.claimRound(ctx, round, now)
	if err != nil || !turn {
		return Round{}, err
	}
	ctx, cancel := context.WithDeadline(ctx, round.Add(every))
	defer cancel()
	stale := 0
	if s.Stale != nil {
		stale = s.Stale.RemoveStale(ctx)
	}
	r, err := s.sweep(ctx, now)
	r.Turn, r.Stale = true, stale
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil // the round ended: the next one goes on
	}
	return r, err
}

// claimRound claims the round starting at round; a lost claim is not this
// node's turn. A failed claim is an error: no node sweeps without one.
func (s *Sweeper) claimRound(ctx context.Context, round, now time.Time) (bool, error) {
	c, ok := s.Store.(storage.Claimer)
	if !ok {
		return true, nil
	}
	claim := storage.Claim{Set: SweepSet, Name: "round-" + strconv.FormatInt(round.Unix(), 10),
		Expires: round.Add(2 * s.every())}
	switch err := c.Claim(ctx, claim); {
	case errors.Is(err, storage.ErrExists):
		return false, nil
	case err != nil:
		return false, err
	}
	_, _ = c.SweepClaims(ctx, SweepSet, now) // the rounds past
	return true, nil
}

// sweep lists up to List objects from the cursor and deletes the expired
// ones, up to Max. The next round lists on from the page after the last
// one finished, or again from the page where Max stopped it (what it
// deleted is gone from it); the end of the store starts over.
func (s *Sweeper) sweep(ctx context.Context, now time.Time) (Round, error) {
	var r Round
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.source()
	limit, max := cmp.Or(s.List, DefaultSweepList), cmp.Or(s.Max, DefaultSweepMax)
	for r.Listed < limit {
		page, err := src.List(ctx, "", s.cursor, min(limit-r.Listed, 1000))
		if errors.Is(err, storage.ErrInvalidCursor) {
			s.cursor = "" // a cursor the store no longer takes: start over
		}
		if err != nil {
			return r, err
		}
		if full, err := s.sweepPage(ctx, page.Items, now, max, &r); full || err != nil {
			return r, err
		}
		s.cursor = page.NextCursor
		if s.cursor == "" {
			r.Done = true
			return r, nil
		}
	}
	return r, nil
}

// sweepPage deletes the expired blobs of items until r holds max
// removals (full).
func (s *Sweeper) sweepPage(ctx context.Context, items []storage.Info, now time.Time, max int, r *Round) (full bool, err error) {
	for _, it := range items {
		r.Listed++
		if !s.Policy.Expired(it, now) {
			continue
		}
		removed, err := s.remove(ctx, it.Key, now)
		if err != nil {
			return false, err
		}
		if removed != nil {
			r.Removed++
			r.Bytes += removed.Size
			if s.Swept != nil {
				s.Swept(*removed)
			}
		}
		if r.Removed >= max {
			return true, nil
		}
	}
	return false, nil
}

// remove deletes key if it is still expired when looked at again (a
// writer may have replaced it since the listing; one that replaces it
// between this look and the delete loses its blob: the window is one
// round trip to the store). It returns the Info of what it deleted, nil
// when nothing was.
func (s *Sweeper) remove(ctx context.Context, key string, now time.Time) (*storage.Info, error) {
	src := s.source()
	info, err := src.Stat(ctx, key)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case !s.Policy.Expired(info, now):
		return nil, nil
	}
	del := s.Delete
	if del == nil {
		del = s.Store.Delete
	}
	if err := del(ctx, key); errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &info, nil
}
