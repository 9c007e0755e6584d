package onetime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// The sets of facts, and how they age.
const (
	Links   = "links"   // single-use download links redeemed, by nonce
	Uploads = "uploads" // upload ids taken, by upload id
	// Sessions holds live 2025-11-25 sessions, by a digest of the id:
	// created by initialize, removed when the session ends. (Before
	// session ids of purpose token.PurposeSession it held ended sessions;
	// those claims belong to ids no node accepts now, and expire.)
	Sessions = "sessions"
	// SweepEvery is the interval between sweeps of expired facts.
	SweepEvery = 10 * time.Minute
	// Grace keeps a fact a little past its token's expiry, so clock skew
	// between nodes cannot reopen a link in its last seconds.
	Grace = 5 * time.Minute
)

// sets are the sets a sweep covers.
var sets = []string{Links, Uploads, Sessions}

// ErrClaimed means the fact was already recorded: the link was used, the
// upload id taken.
var ErrClaimed = errors.New("onetime: already claimed")

// Facts records one-time facts in a store. Safe for concurrent use.
type Facts struct {
	claims storage.Claimer
	shared bool // claims are the store's, not this process's
	log    *slog.Logger
	names  *sessionNames // the record names of recent session ids
}

// New returns the facts kept in b's claims or, for a backend without them,
// in this process (storage.MemClaims: exact on one node only, and bounded),
// which it logs as a warning. log must not be nil.
func New(b storage.Backend, log *slog.Logger) *Facts {
	f := &Facts{log: log, names: newSessionNames()}
	if c, ok := b.(storage.Claimer); ok {
		f.claims, f.shared = c, true
	} else {
		f.claims = &storage.MemClaims{}
		log.Warn("server: the storage backend keeps no claims; single-use links, upload endpoints and session ends are exact on this node only")
	}
	return f
}

// Claim records set/name for a token that expires at exp (zero: the
// default download link lifetime from now); ErrClaimed when it was already
// recorded, another error when the store failed.
func (f *Facts) Claim(ctx context.Context, set, name string, exp time.Time) error {
	err := f.claims.Claim(ctx, claimOf(set, name, exp))
	if errors.Is(err, storage.ErrExists) {
		return ErrClaimed
	}
	return err
}

// ClaimToken records set's fact for token c (its nonce, until its expiry),
// charged first to the principal c was minted for against rate (nil: no
// rate): over it a *budget.Exceeded, and nothing is written.
func (f *Facts) ClaimToken(ctx context.Context, set string, c token.Claims, rate *budget.Rate) error {
	if rate != nil {
		if err := rate.Allow(c.Principal); err != nil {
			return err
		}
	}
	return f.Claim(ctx, set, c.Nonce, c.Expires)
}

// Release gives a reservation back (its upload stored nothing); a failure
// is logged.
func (f *Facts) Release(set, name string, exp time.Time) {
	if err := f.claims.Release(context.Background(), claimOf(set, name, exp)); err != nil {
		f.log.Error("server: releasing a claim failed", "set", set, "err", err)
	}
}

func claimOf(set, name string, exp time.Time) storage.Claim {
	if exp.IsZero() {
		exp = time.Now().Add(token.DefaultDownloadTTL)
	}
	return storage.Claim{Set: set, Name: name, Expires: exp.Add(Grace)}
}

// Sweep removes the expired facts of every set, then again every
// SweepEvery, until ctx ends.
func (f *Facts) Sweep(ctx context.Context) {
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	for {
		for _, set := range sets {
			if n, err := f.claims.SweepClaims(ctx, set, time.Now()); err != nil && ctx.Err() == nil {
				f.log.Error("server: sweeping expired claims failed", "set", set, "err", err)
			} else if n > 0 {
				f.log.Debug("server: swept expired claims", "set", set, "removed", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// LiveSessions returns the record of live 2025-11-25 sessions kept in the
// store's claims, for mcp.Options.LiveSessions; nil when the claims are
// kept in this process, where core/mcp's own table and revocations already
// do that job.
func (f *Facts) LiveSessions() session.LiveSessions {
	if !f.shared {
		return nil
	}
	return liveSessions{f}
}

// liveSessions records a live session as a claim in Sessions named by a
// digest of its id, expiring with the session (plus Grace).
type liveSessions struct{ f *Facts }

// Begin claims the session's record (create-if-absent).
func (l liveSessions) Begin(ctx context.Context, id string, expires time.Time) error {
	return l.f.claims.Claim(ctx, claimOf(Sessions, l.f.names.of(id), expires))
}

// Live asks the store whether the session's record exists (a stat of a
// file, a HEAD on S3).
func (l liveSessions) Live(ctx context.Context, id string, expires time.Time) (bool, error) {
	return l.f.claims.Claimed(ctx, claimOf(Sessions, l.f.names.of(id), expires))
}

// End removes the session's record; a missing one is not an error.
func (l liveSessions) End(ctx context.Context, id string, expires time.Time) error {
	return l.f.claims.Release(ctx, claimOf(Sessions, l.f.names.of(id), expires))
}

// SessionName is the name of session id's claim in Sessions: the hex of the
// first 16 bytes of its SHA-256. The id is a credential and never reaches
// the store.
func SessionName(id string) string {
	d := sha256.Sum256([]byte(id))
	return hex.EncodeToString(d[:16])
}
