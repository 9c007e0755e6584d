package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// MemStager is a Stager kept in this process, a stand-in for tests: its
// commits land in Objects, and it checks what the interface leaves to the
// caller (parts in order, the minimum part size, the caller's SHA-256
// against the bytes), so a caller's mistake fails the commit.
type MemStager struct {
	// PartMin is StagedPartMin (1 when zero).
	PartMin int

	mu      sync.Mutex
	staged  map[string]*memStaged
	objects map[string][]byte
	written int64
}

type memStaged struct {
	key   string
	parts map[int][]byte
	top   int
}

var _ Stager = (*MemStager)(nil)

// Object returns a committed object's bytes.
func (m *MemStager) Object(key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[key]
	return b, ok
}

// Written returns the bytes PutStaged took.
func (m *MemStager) Written() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.written
}

// Staged returns how many staged writes are open.
func (m *MemStager) Staged() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.staged)
}

func (m *MemStager) BeginStaged(ctx context.Context, key string, opts CreateOptions) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if _, err := opts.Normalize(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.staged == nil {
		m.staged, m.objects = map[string]*memStaged{}, map[string][]byte{}
	}
	id := rand.Text()
	m.staged[id] = &memStaged{key: key, parts: map[int][]byte{}}
	return id, ctx.Err()
}

func (m *MemStager) StagedPartMin() int { return max(m.PartMin, 1) }

func (m *MemStager) PutStaged(ctx context.Context, id string, number int, _ int64, data []byte) (StagedPart, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.staged[id]
	if !ok {
		return StagedPart{}, ErrStagedGone
	}
	if number < s.top {
		return StagedPart{}, ErrPreconditionFailed
	}
	s.top = number
	s.parts[number] = bytes.Clone(data)
	m.written += int64(len(data))
	return StagedPart{Number: number, Size: int64(len(data)), ETag: fmt.Sprint(time.Now().UnixNano())}, ctx.Err()
}

func (m *MemStager) CommitStaged(ctx context.Context, id string, parts []StagedPart, opts CreateOptions, sha string) (Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.staged[id]
	if !ok {
		return Info{}, ErrStagedGone
	}
	var all []byte
	for i, p := range parts {
		b := s.parts[p.Number]
		switch {
		case b == nil || int64(len(b)) != p.Size || i > 0 && p.Number <= parts[i-1].Number:
			return Info{}, fmt.Errorf("storage: staged part %d does not match the part stored", p.Number)
		case i < len(parts)-1 && len(b) < m.StagedPartMin():
			return Info{}, fmt.Errorf("storage: staged part %d is below the minimum", p.Number)
		}
		all = append(all, b...)
	}
	if sum := sha256.Sum256(all); hex.EncodeToString(sum[:]) != sha {
		return Info{}, fmt.Errorf("storage: the caller's SHA-256 does not match the staged bytes")
	}
	if opts.Size > 0 && int64(len(all)) != opts.Size {
		return Info{}, ErrSizeMismatch
	}
	if _, ok := m.objects[s.key]; ok && opts.IfNotExists {
		return Info{}, ErrExists
	}
	m.objects[s.key] = all
	delete(m.staged, id)
	return Info{Key: s.key, Size: int64(len(all)), SHA256: sha, MediaType: opts.MediaType, Filename: opts.Filename}, ctx.Err()
}

func (m *MemStager) AbortStaged(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.staged, id)
	return nil
}
