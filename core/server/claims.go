package server

import (
	"context"
	"errors"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// One-time facts (single-use links redeemed, upload ids taken) are
// storage claims: created only if absent, in the store every node shares,
// so each holds exactly across a cluster, costs no memory, and cannot be
// evicted by anyone's volume of links. A claim expires with its token and
// a sweep removes it after that.
const (
	claimSetLinks   = "links"
	claimSetUploads = "uploads"
	claimSweepEvery = 10 * time.Minute
	// claimGrace keeps a claim a little past its token's expiry, so clock
	// skew between nodes cannot reopen a link in its last seconds.
	claimGrace = 5 * time.Minute
)

// errClaimed means the fact was already recorded: the link was used, the
// upload id taken.
var errClaimed = errors.New("server: already claimed")

// claim records set/name for a token that expires at exp; errClaimed when
// it was already recorded, another error when the store failed.
func (s *Server) claim(ctx context.Context, set, name string, exp time.Time) error {
	err := s.claims.Claim(ctx, claimOf(set, name, exp))
	if errors.Is(err, storage.ErrExists) {
		return errClaimed
	}
	return err
}

// unclaim gives a reservation back (its upload stored nothing).
func (s *Server) unclaim(set, name string, exp time.Time) {
	if err := s.claims.Release(context.Background(), claimOf(set, name, exp)); err != nil {
		s.log.Error("server: releasing a claim failed", "set", set, "err", err)
	}
}

func claimOf(set, name string, exp time.Time) storage.Claim {
	if exp.IsZero() {
		exp = time.Now().Add(token.DefaultDownloadTTL)
	}
	return storage.Claim{Set: set, Name: name, Expires: exp.Add(claimGrace)}
}

// sweepClaims removes expired claims every claimSweepEvery until ctx ends.
func (s *Server) sweepClaims(ctx context.Context) {
	t := time.NewTicker(claimSweepEvery)
	defer t.Stop()
	for {
		for _, set := range []string{claimSetLinks, claimSetUploads} {
			if n, err := s.claims.SweepClaims(ctx, set, time.Now()); err != nil && ctx.Err() == nil {
				s.log.Error("server: sweeping expired claims failed", "set", set, "err", err)
			} else if n > 0 {
				s.log.Debug("server: swept expired claims", "set", set, "removed", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// claimsOf returns the backend's claims, or, for a backend without them
// (a third-party storage.Backend given through the Go API), claims kept in
// this process: exact on one node only, and bounded (storage.MemClaims).
func claimsOf(b storage.Backend) (storage.Claimer, bool) {
	if c, ok := b.(storage.Claimer); ok {
		return c, true
	}
	return &storage.MemClaims{}, false
}
