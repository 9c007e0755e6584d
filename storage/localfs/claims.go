package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

var _ storage.Claimer = (*Store)(nil)

// Claim creates the claim's file with O_EXCL: of concurrent callers
// exactly one succeeds, the others get storage.ErrExists. The file is not
// synced: a claim survives a crash of the process, not of the machine.
func (s *Store) Claim(ctx context.Context, c storage.Claim) error {
	p, err := s.claimPath(ctx, c)
	if err != nil {
		return fmt.Errorf("localfs: claim: %w", err)
	}
	f, err := s.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if isNotExist(err) {
		if err = s.root.MkdirAll(path.Dir(p), dirMode); err == nil {
			f, err = s.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
		}
	}
	switch {
	case errors.Is(err, os.ErrExist):
		return fmt.Errorf("localfs: claim %s/%s: %w", c.Set, c.Name, storage.ErrExists)
	case err != nil:
		return fmt.Errorf("localfs: claim %s/%s: %w", c.Set, c.Name, err)
	}
	s.holdClaimDir(c.Set, path.Dir(p))
	return f.Close()
}

// Claimed stats the claim's file: one fstatat in the set's held folder, or
// nothing at all while the set's folder is known not to exist.
func (s *Store) Claimed(ctx context.Context, c storage.Claim) (bool, error) {
	p, err := s.claimPath(ctx, c)
	if err != nil {
		return false, fmt.Errorf("localfs: claimed: %w", err)
	}
	dir, known := s.claimDir(c.Set, path.Dir(p))
	switch {
	case known && dir == nil:
		return false, nil
	case known:
		ok, err := claimExists(dir, path.Base(p))
		if err != nil {
			return false, fmt.Errorf("localfs: claimed: %w", err)
		}
		return ok, nil
	}
	_, err = s.root.Stat(p)
	if isNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("localfs: claimed: %w", err)
	}
	return true, nil
}

// claimDir returns the held folder of set (dir, below the root), opening
// it on first use; known is false when the set is not held (then the
// caller goes through the os.Root), and dir is nil when known absent.
func (s *Store) claimDir(set, dir string) (*os.File, bool) {
	if !holdClaimDirs {
		return nil, false
	}
	if f, known := s.claimDirs.get(set); known {
		return f, true
	}
	f, err := s.root.Open(dir)
	switch {
	case isNotExist(err):
		f = nil
	case err != nil:
		return nil, false
	}
	if !s.claimDirs.keep(set, f) {
		if f != nil {
			f.Close()
		}
		return s.claimDirs.get(set)
	}
	return f, true
}

// holdClaimDir holds set's folder dir, which Claim has just created, in
// place of a record of its absence. When the folder cannot be opened the
// set is forgotten, so that Claimed goes through the os.Root again.
func (s *Store) holdClaimDir(set, dir string) {
	if !holdClaimDirs {
		return
	}
	if f, known := s.claimDirs.get(set); known && f != nil {
		return
	}
	f, err := s.root.Open(dir)
	if err != nil {
		s.claimDirs.forget(set)
		return
	}
	if !s.claimDirs.created(set, f) {
		f.Close()
	}
}

// Release removes the claim's file.
func (s *Store) Release(ctx context.Context, c storage.Claim) error {
	p, err := s.claimPath(ctx, c)
	if err == nil {
		err = ignoreNotExist(s.root.Remove(p))
	}
	if err != nil {
		return fmt.Errorf("localfs: release claim: %w", err)
	}
	return nil
}

// SweepClaims removes the set's claim files that expired before now.
func (s *Store) SweepClaims(ctx context.Context, set string, now time.Time) (int, error) {
	dir, err := s.claimPath(ctx, storage.Claim{Set: set, Name: "x", Expires: now})
	if err != nil {
		return 0, fmt.Errorf("localfs: sweep claims: %w", err)
	}
	dir = path.Dir(dir)
	f, err := s.root.Open(dir)
	if isNotExist(err) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("localfs: sweep claims: %w", err)
	}
	defer f.Close()
	removed := 0
	for ctx.Err() == nil {
		batch, err := f.ReadDir(1024)
		for _, e := range batch {
			if storage.ClaimExpired(e.Name(), now) && ignoreNotExist(s.root.Remove(dir+"/"+e.Name())) == nil {
				removed++
			}
		}
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			return removed, nil
		} else if err != nil {
			return removed, fmt.Errorf("localfs: sweep claims: %w", err)
		}
	}
	return removed, ctx.Err()
}

func (s *Store) claimPath(ctx context.Context, c storage.Claim) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p, err := c.Path()
	if err != nil {
		return "", err
	}
	return storage.ClaimsDir + "/" + p, nil
}
