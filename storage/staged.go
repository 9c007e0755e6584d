package storage

import (
	"context"
	"errors"
	"io"
)

// StagedPart is one part of a staged object: its number (1, 2, … in
// order), its size and what the store needs to name it at commit (S3's
// ETag; nothing on the local store).
type StagedPart struct {
	Number int    `json:"n"`
	Size   int64  `json:"size"`
	ETag   string `json:"etag,omitempty"`
	// Sum is the part's checksum as the store must repeat it at commit
	// (S3's CRC32C of an unsigned part), if any.
	Sum string `json:"sum,omitempty"`
}

// ErrStagedGone reports a staged object that is no longer there: aborted,
// committed, or removed by a sweep.
var ErrStagedGone = errors.New("storage: staged object not found")

// Stager writes objects in parts that any node sharing the store can add
// to, for resumable uploads whose state lives elsewhere (in a record). The
// bytes go where the object will live (S3: the object's multipart upload;
// the local store: one file, renamed into place), so making the object
// visible copies nothing.
//
// The caller keeps the truth: which parts exist and how many bytes they
// hold. A part written but not named by the caller's state is garbage
// that the next PutStaged at that number (and offset) overwrites, or
// AbortStaged removes.
type Stager interface {
	// BeginStaged starts a staged write of key, with Create's checks
	// (key rules, path conflicts, options). The id names it in the other
	// methods, on any node; it is opaque and at most MaxStagedID bytes.
	// The media type and filename of opts are fixed here (as Create fixes
	// them).
	BeginStaged(ctx context.Context, key string, opts CreateOptions) (id string, err error)
	// PutStaged writes data as part number of the staged write, at byte
	// offset (the sum of the sizes of the parts before it). Once it
	// returns the part is durable. A part other than the last must hold at
	// least StagedPartMin bytes. Numbers need not be consecutive, only
	// ascending in CommitStaged's list; writing one again replaces the part.
	// Writing at an offset drops any bytes staged past it (the local
	// store's one file). A store may refuse a number below one it already
	// took (ErrPreconditionFailed): its writer was replaced by a later one.
	PutStaged(ctx context.Context, id string, number int, offset int64, data []byte) (StagedPart, error)
	// StagedPartMin is the smallest part but the last (S3: 5 MiB).
	StagedPartMin() int
	// CommitStaged makes parts, in order, the object of the key given to
	// BeginStaged, as Writer.Commit does: opts.Size (when > 0) must be
	// their total, opts.IfNotExists holds, and sha256 (the caller's hex
	// digest of the bytes, which it computed as they arrived) becomes
	// Info.SHA256. After a failure the staged write is still there; after
	// a success it is gone, and committing it again gives ErrStagedGone or
	// (S3, which completes a completed upload again) the same object.
	CommitStaged(ctx context.Context, id string, parts []StagedPart, opts CreateOptions, sha256 string) (Info, error)
	// AbortStaged removes the staged write; a missing one is not an error.
	AbortStaged(ctx context.Context, id string) error
}

// MaxStagedID bounds a staged write's id.
const MaxStagedID = 2048

// StagerOf returns b's Stager: b itself when it is one, else what a
// wrapper (storage/observed, storage/namespace) gives through a Stager
// method; nil when b has none.
func StagerOf(b Backend) Stager {
	switch s := b.(type) {
	case interface{ Stager() Stager }:
		return s.Stager()
	case Stager:
		return s
	}
	return nil
}

// StagedSize is the total size of parts.
func StagedSize(parts []StagedPart) int64 {
	var n int64
	for _, p := range parts {
		n += p.Size
	}
	return n
}

// StagedStreamer is a Stager that takes a part's bytes as they arrive
// (the local store), so the store writes them while the rest of the part
// is still on its way: WriteStaged writes bytes of part number at offset,
// not yet durable, dropping any bytes staged past them; SyncStaged makes
// the part of size bytes at offset, written before by WriteStaged,
// durable, dropping any bytes past it, and returns it as PutStaged
// would. Part numbers are refused as PutStaged refuses them.
type StagedStreamer interface {
	WriteStaged(ctx context.Context, id string, number int, offset int64, data []byte) error
	SyncStaged(ctx context.Context, id string, number int, offset, size int64) (StagedPart, error)
}

// StreamerOf returns st's StagedStreamer: what a wrapper gives through a
// StagedStreamer method, else st itself when it is one; nil when it has
// none.
func StreamerOf(st Stager) StagedStreamer {
	switch s := st.(type) {
	case interface{ StagedStreamer() StagedStreamer }:
		return s.StagedStreamer()
	case StagedStreamer:
		return s
	}
	return nil
}

// StagedSender is a Stager that uploads a part while its bytes arrive
// (S3: one UploadPart request whose body is the bytes as they come in),
// given the part's size before its first byte. SendStaged reads exactly
// size bytes from r and stores them as part number at offset, returning
// the part as PutStaged would; when r ends or fails before size bytes
// the part is not stored (an error), and the number may be written again.
type StagedSender interface {
	SendStaged(ctx context.Context, id string, number int, offset, size int64, r io.Reader) (StagedPart, error)
}

// SenderOf returns st's StagedSender: what a wrapper (or a store that
// sends parts only in some modes) gives through a StagedSender method,
// else st itself when it is one; nil when it has none.
func SenderOf(st Stager) StagedSender {
	switch s := st.(type) {
	case interface{ StagedSender() StagedSender }:
		return s.StagedSender()
	case StagedSender:
		return s
	}
	return nil
}

// StagedClaimer is a Stager whose staged writes have one writer process
// (the local store, under its folder lock). ClaimStaged claims part
// number for the caller, in memory: it refuses (ErrPreconditionFailed) a
// number not above every number claimed or written to the staged write
// before, so that no two writers of the process hold one number, without
// a write to state shared with other processes.
type StagedClaimer interface {
	ClaimStaged(ctx context.Context, id string, number int) error
}

// ClaimerOf returns st's StagedClaimer: what a wrapper gives through a
// StagedClaimer method, else st itself when it is one; nil when it has
// none.
func ClaimerOf(st Stager) StagedClaimer {
	switch s := st.(type) {
	case interface{ StagedClaimer() StagedClaimer }:
		return s.StagedClaimer()
	case StagedClaimer:
		return s
	}
	return nil
}
