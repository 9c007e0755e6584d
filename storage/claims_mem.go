package storage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// MemClaims is a Claimer kept in this process, the fallback for a backend
// without claims (a third-party Backend given through the Go API): exact on
// one node only. It holds at most MaxMemClaims live
// claims; when full it refuses new ones (a single-use link then answers 404,
// an upload 503) rather than forgetting a used one.
type MemClaims struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// MaxMemClaims bounds the live claims a MemClaims holds.
const MaxMemClaims = 1 << 16

// ErrClaimsFull means MemClaims has no room for a new claim.
var ErrClaimsFull = errors.New("storage: too many one-time claims in memory")

// Claim records c, or answers ErrExists when it was made before.
func (m *MemClaims) Claim(_ context.Context, c Claim) error {
	p, err := c.Path()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]time.Time{}
	}
	if _, ok := m.seen[p]; ok {
		return ErrExists
	}
	if len(m.seen) >= MaxMemClaims {
		m.dropExpiredLocked(time.Now(), "")
		if len(m.seen) >= MaxMemClaims {
			return ErrClaimsFull
		}
	}
	m.seen[p] = c.Expires
	return nil
}

// Claimed reports whether c is recorded.
func (m *MemClaims) Claimed(_ context.Context, c Claim) (bool, error) {
	p, err := c.Path()
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.seen[p]
	return ok, nil
}

// Release forgets c.
func (m *MemClaims) Release(_ context.Context, c Claim) error {
	p, err := c.Path()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, p)
	return nil
}

// SweepClaims forgets the claims of set expired at now.
func (m *MemClaims) SweepClaims(_ context.Context, set string, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropExpiredLocked(now, set+"/"), nil
}

// dropExpiredLocked forgets the claims expired at now whose path starts
// with prefix ("": of every set).
func (m *MemClaims) dropExpiredLocked(now time.Time, prefix string) int {
	n := 0
	for p, exp := range m.seen {
		if exp.Before(now) && strings.HasPrefix(p, prefix) {
			delete(m.seen, p)
			n++
		}
	}
	return n
}
