package storage

import (
	"context"
	"strconv"
	"strings"
	"sync"
)

// MemRecords is a Recorder kept in this process, the fallback for a
// backend without records (a third-party Backend given through the Go
// API) and a stand-in for tests: exact on one node only, and lost with
// the process.
type MemRecords struct {
	mu   sync.Mutex
	seq  uint64
	recs map[string]memRecord
}

type memRecord struct {
	data    []byte
	version string
}

var _ Recorder = (*MemRecords)(nil)

// GetRecord returns a copy of the record's bytes and its version.
func (m *MemRecords) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	if err := ValidateRecordName(name); err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[name]
	if !ok {
		return nil, "", ErrNotFound
	}
	return append([]byte(nil), r.data...), r.version, nil
}

// PutRecord stores a copy of data when the record's version is ifMatch.
func (m *MemRecords) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	if err := CheckRecord(name, data); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[name]; ok != (ifMatch != "") || ok && r.version != ifMatch {
		return "", ErrPreconditionFailed
	}
	if m.recs == nil {
		m.recs = map[string]memRecord{}
	}
	m.seq++
	v := strconv.FormatUint(m.seq, 10)
	m.recs[name] = memRecord{data: append([]byte(nil), data...), version: v}
	return v, nil
}

// DeleteRecord forgets the record.
func (m *MemRecords) DeleteRecord(ctx context.Context, name string) error {
	if err := ValidateRecordName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, name)
	return ctx.Err()
}

// ListRecords calls fn with the names below dir, from a snapshot.
func (m *MemRecords) ListRecords(ctx context.Context, dir string, fn func(string) bool) error {
	if err := ValidateRecordName(dir); err != nil {
		return err
	}
	m.mu.Lock()
	var names []string
	for n := range m.recs {
		if strings.HasPrefix(n, dir+"/") {
			names = append(names, n)
		}
	}
	m.mu.Unlock()
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !fn(n) {
			break
		}
	}
	return nil
}

// Len reports how many records m holds.
func (m *MemRecords) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}
