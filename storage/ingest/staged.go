package ingest

import (
	"context"
	"fmt"

	"github.com/mcpblob/mcpblob/storage"
)

// Staged is an upload's bytes already in a staged write
// (storage.Stager), as a resumable upload leaves them: its parts, their
// SHA-256 (hex) and first bytes (up to SniffLen), kept as they arrived.
type Staged struct {
	ID     string
	Parts  []storage.StagedPart
	SHA256 string
	Head   []byte
}

// CheckDeclared applies Begin's checks to spec without storing anything:
// options no backend accepts, and the declared media type (with the
// filename's extension) against Accept, an [*Error] wrapping
// ErrNotAccepted. An upload surface that takes the bytes later (a
// resumable upload's creation) refuses a declared type with it before
// any byte is sent.
func CheckDeclared(spec Spec) error {
	_, _, err := prepare(spec)
	return err
}

// BeginStaged applies Begin's checks to spec and starts a staged write of
// spec.Key: the same options and errors as Begin, for bytes that arrive
// over many requests. CommitStaged ends it.
func BeginStaged(ctx context.Context, st storage.Stager, spec Spec) (string, error) {
	_, opts, err := prepare(spec)
	if err != nil {
		return "", err
	}
	id, err := st.BeginStaged(ctx, spec.Key, opts)
	if err != nil {
		return "", fmt.Errorf("ingest: begin %q: %w", spec.Key, err)
	}
	return id, nil
}

// CommitStaged applies Write's and Close's checks to the staged bytes
// (MaxSize and Size, empty, the sniffed type from s.Head against the
// declared one and Accept) and makes them the object, which copies no
// byte: the one write of each byte was the staged part's. After a refusal
// or failure the staged write is left as it was (the caller aborts it or
// tries again). Errors are those of Close and Commit.
func CommitStaged(ctx context.Context, st storage.Stager, spec Spec, s Staged) (storage.Info, error) {
	u, opts, err := prepare(spec)
	if err != nil {
		return storage.Info{}, err
	}
	u.n, u.head = storage.StagedSize(s.Parts), s.Head[:min(len(s.Head), SniffLen)]
	if spec.MaxSize > 0 && u.n > spec.MaxSize {
		return storage.Info{}, &Error{Err: ErrTooLarge, Detail: fmt.Sprintf("file is larger than maxSize %d bytes", spec.MaxSize)}
	}
	if err := u.check(); err != nil {
		return storage.Info{}, err
	}
	// The type stays the one given to BeginStaged (MediaType's note).
	info, err := st.CommitStaged(ctx, s.ID, s.Parts, opts, s.SHA256)
	if err != nil {
		return storage.Info{}, fmt.Errorf("ingest: commit %q: %w", spec.Key, err)
	}
	return info, nil
}
