package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Claims are one-time facts that every node sharing a store must agree on
// exactly: a single-use link was redeemed, an upload id was taken, a
// session is live (until its claim is released). A claim
// is created only if absent (exactly one of many concurrent writers wins,
// on one node or many) and lives until its expiry, after which a sweep may
// remove it. Claims are bookkeeping under ReservedDir, never objects: List
// does not show them and no key reaches them.
type Claimer interface {
	// Claim records c; it fails with ErrExists when c is already recorded.
	Claim(ctx context.Context, c Claim) error
	// Claimed reports whether c is recorded (an expired claim counts until
	// a sweep removes it). It asks the store every time, so a claim another
	// node made a moment ago is seen.
	Claimed(ctx context.Context, c Claim) (bool, error)
	// Release removes c (a reservation given back because its work failed,
	// a session that ended); a missing claim is not an error.
	Release(ctx context.Context, c Claim) error
	// SweepClaims removes the claims of set that expired before now and
	// reports how many it removed.
	SweepClaims(ctx context.Context, set string, now time.Time) (int, error)
}

// Claim names one claim: a set (what kind of fact), a name unique within
// it, and the time after which the fact no longer matters (the expiry of
// the token it belongs to).
type Claim struct {
	Set     string
	Name    string
	Expires time.Time
}

// ClaimsDir is where backends keep claims, below ReservedDir.
const ClaimsDir = ReservedDir + "/claims"

// maxClaimName bounds a claim's set and name.
const maxClaimName = 128

// Path is the claim's slash-separated location below ClaimsDir:
// "<set>/<expiry as 12 decimal digits of Unix seconds>-<name>", so a set's
// claims list in expiry order and a sweep stops at the first live one.
func (c Claim) Path() (string, error) {
	if !claimToken(c.Set) || !claimToken(c.Name) {
		return "", fmt.Errorf("%w: claim set %q or name %q is not 1-%d of [A-Za-z0-9_-]", ErrInvalidKey, TruncateKey(c.Set), TruncateKey(c.Name), maxClaimName)
	}
	if c.Expires.IsZero() || c.Expires.Unix() < 0 {
		return "", fmt.Errorf("storage: claim %s/%s has no expiry", c.Set, c.Name)
	}
	// As fmt's %012d, without its allocations: Claimed makes a Path per request.
	const zeros = "000000000000"
	var digits [20]byte
	sec := strconv.AppendInt(digits[:0], c.Expires.Unix(), 10)
	return c.Set + "/" + zeros[:max(len(zeros)-len(sec), 0)] + string(sec) + "-" + c.Name, nil
}

// ClaimExpired reports whether the claim file or object named base (the
// last element of a Path) expired before now; names that are not claims
// count as expired so a sweep removes them.
func ClaimExpired(base string, now time.Time) bool {
	exp, _, ok := strings.Cut(base, "-")
	if !ok {
		return true
	}
	sec, err := strconv.ParseInt(exp, 10, 64)
	return err != nil || time.Unix(sec, 0).Before(now)
}

func claimToken(s string) bool {
	if s == "" || len(s) > maxClaimName {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}
