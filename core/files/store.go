package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// recordDir is where file records live among the store's records.
const recordDir = "mcpfiles"

// casTries bounds the compare-and-swap retries of one update.
const casTries = 8

// ErrNotFound is a file that does not exist, or is someone else's: the two
// are not told apart.
var ErrNotFound = errors.New("files: no such file")

// Store keeps file records in a storage.Recorder, replaced by
// compare-and-swap, so nodes sharing the store agree on every file's state.
type Store struct{ rec storage.Recorder }

// NewStore returns the Store over rec.
func NewStore(rec storage.Recorder) *Store { return &Store{rec: rec} }

func fileRecord(id string) string { return recordDir + "/f/" + id }

// idemRecord is the record of an owner's idempotency key: a hash, since
// keys are the client's bytes and record names are not.
func idemRecord(owner, key string) string {
	h := sha256.Sum256([]byte(owner + "\x00" + key))
	return recordDir + "/k/" + hex.EncodeToString(h[:20])
}

// Get returns owner's file id; ErrNotFound when there is none, or it is
// another principal's.
func (s *Store) Get(ctx context.Context, owner, id string) (*File, error) {
	f, err := s.Lookup(ctx, id)
	if err == nil && f.Owner != owner {
		return nil, ErrNotFound
	}
	return f, err
}

// Lookup returns file id whoever owns it: for the server's own bookkeeping
// (bytes that arrived under the file's key), never for a client's request.
func (s *Store) Lookup(ctx context.Context, id string) (*File, error) {
	if !allIn(id, idByte) || id == "" || len(id) > maxIDLen {
		return nil, ErrNotFound
	}
	data, v, err := s.rec.GetRecord(ctx, fileRecord(id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	f := new(File)
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("files: file %s: damaged record: %w", id, err)
	}
	if f.Expired {
		return nil, ErrNotFound
	}
	f.version = v
	return f, nil
}

// Create writes f's record; f.ID must be new.
func (s *Store) Create(ctx context.Context, f *File) error {
	f.version = ""
	return s.save(ctx, f)
}

func (s *Store) save(ctx context.Context, f *File) error {
	f.Rev++
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	v, err := s.rec.PutRecord(ctx, fileRecord(f.ID), data, f.version)
	if err != nil {
		return err
	}
	f.version = v
	return nil
}

// Update applies change to owner's file id and saves it, reading again
// and retrying when another writer (on any node) changed it in between.
// change sees the latest state; an error from it is returned as is and
// nothing is written.
func (s *Store) Update(ctx context.Context, owner, id string, change func(f *File) error) (*File, error) {
	for range casTries {
		f, err := s.Get(ctx, owner, id)
		if err != nil {
			return nil, err
		}
		if err := change(f); err != nil {
			return f, err
		}
		switch err := s.save(ctx, f); {
		case err == nil:
			return f, nil
		case !errors.Is(err, storage.ErrPreconditionFailed):
			return nil, err
		}
	}
	return nil, fmt.Errorf("files: file %s: %d concurrent updates lost", id, casTries)
}

// Claim binds owner's idempotency key to file id, once: it returns id when
// the key was new, or the id a first call bound it to (on any node). A key
// whose file expired (swept) is bound anew.
func (s *Store) Claim(ctx context.Context, owner, key, id string) (string, error) {
	name := idemRecord(owner, key)
	version := ""
	for range casTries {
		_, err := s.rec.PutRecord(ctx, name, []byte(id), version)
		if !errors.Is(err, storage.ErrPreconditionFailed) {
			return id, err
		}
		data, v, err := s.rec.GetRecord(ctx, name)
		if errors.Is(err, storage.ErrNotFound) {
			version = ""
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := s.Lookup(ctx, string(data)); !errors.Is(err, ErrNotFound) {
			return string(data), err
		}
		version = v
	}
	return "", fmt.Errorf("files: idempotency key: %d concurrent claims lost", casTries)
}

// Sweep removes the records of files whose bytes never arrived (prepared,
// uploading) or were refused (failed) once they expired, with their
// idempotency keys, and reports how many. Any node may sweep at any
// time: a record is first marked expired by compare-and-swap, so an
// upload recorded meanwhile makes the mark fail and the file lives on,
// and a marked record reads as missing before it is removed.
func (s *Store) Sweep(ctx context.Context, now time.Time) (int, error) {
	var ids []string
	err := s.rec.ListRecords(ctx, recordDir+"/f", func(name string) bool {
		if id, ok := strings.CutPrefix(name, recordDir+"/f/"); ok {
			ids = append(ids, id)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, id := range ids {
		ok, err := s.sweepOne(ctx, id, now)
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
		}
	}
	return removed, nil
}

func (s *Store) sweepOne(ctx context.Context, id string, now time.Time) (bool, error) {
	f, err := s.Lookup(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case f.State.Usable() || f.Expires.IsZero() || now.Before(f.Expires):
		return false, nil
	}
	f.Expired = true
	switch err := s.save(ctx, f); {
	case errors.Is(err, storage.ErrPreconditionFailed):
		return false, nil // changed since read: not ours to judge now
	case err != nil:
		return false, err
	}
	if f.IdempotencyKey != "" {
		name := idemRecord(f.Owner, f.IdempotencyKey)
		if data, _, err := s.rec.GetRecord(ctx, name); err == nil && string(data) == id {
			if err := s.rec.DeleteRecord(ctx, name); err != nil {
				return false, err
			}
		}
	}
	return true, s.rec.DeleteRecord(ctx, fileRecord(id))
}
