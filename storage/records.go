package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrPreconditionFailed reports a conditional record write that lost: the
// record's version was not the one named (another writer changed it
// first), or a record that had to be new already existed.
var ErrPreconditionFailed = errors.New("storage: precondition failed: the record changed")

// Recorder keeps records: bookkeeping objects of the server's own below
// RecordsDir (the state of a resumable upload and its staged bytes), never
// objects: List does not show them and no key reaches them. Every write is
// conditional, as S3 does it (If-Match on PUT, If-None-Match: * to
// create), so nodes sharing a store update one record by compare-and-swap:
// of concurrent writers naming the same version exactly one succeeds, on
// one node or many. Names are paths, and as with keys a name is not both
// a record and a folder of records ("a" and "a/b").
type Recorder interface {
	// GetRecord returns the record's bytes and its version, an opaque
	// string that changes with every write; a missing record gives
	// ErrNotFound.
	GetRecord(ctx context.Context, name string) (data []byte, version string, err error)
	// PutRecord stores data as the record when its version is ifMatch;
	// ifMatch "" requires that the record not exist. It returns the new
	// version; a condition that does not hold gives ErrPreconditionFailed
	// and changes nothing. Once PutRecord returns, the record survives a
	// crash of the process (the local store also syncs it to disk).
	PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (version string, err error)
	// DeleteRecord removes the record; a missing record is not an error.
	DeleteRecord(ctx context.Context, name string) error
	// ListRecords calls fn with the name of each record below the folder
	// dir (a valid record name; records "dir/…" at any depth), in no
	// particular order, until fn returns false. Records written or
	// deleted meanwhile may or may not be seen.
	ListRecords(ctx context.Context, dir string, fn func(name string) bool) error
}

// RecordsDir is where backends keep records, below ReservedDir.
const RecordsDir = ReservedDir + "/records"

// MaxRecordName bounds a record's name.
const MaxRecordName = 200

// MaxRecordSize bounds a record's bytes.
const MaxRecordSize = 64 << 20

// ValidateRecordName checks a record name: 1 to MaxRecordName bytes of
// segments of [A-Za-z0-9_-] joined by single '/'. Errors wrap ErrInvalidKey.
func ValidateRecordName(name string) error {
	if name == "" || len(name) > MaxRecordName {
		return fmt.Errorf("%w: record name of %d bytes", ErrInvalidKey, len(name))
	}
	for _, seg := range strings.Split(name, "/") {
		if !claimToken(seg) {
			return fmt.Errorf("%w: record name %q is not segments of [A-Za-z0-9_-]", ErrInvalidKey, name)
		}
	}
	return nil
}

// CheckRecord validates a record write's name and size.
func CheckRecord(name string, data []byte) error {
	if err := ValidateRecordName(name); err != nil {
		return err
	}
	if len(data) > MaxRecordSize {
		return fmt.Errorf("%w: record of %d bytes is over %d", ErrTooLarge, len(data), MaxRecordSize)
	}
	return nil
}

// RecorderOf returns b's Recorder: b itself when it is one, else what a
// wrapper (storage/observed) gives through a Recorder method; nil when b
// has none.
func RecorderOf(b Backend) Recorder {
	switch r := b.(type) {
	case Recorder:
		return r
	case interface{ Recorder() Recorder }:
		return r.Recorder()
	}
	return nil
}
