package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
)

var _ storage.Claimer = (*Store)(nil)

// Claim puts the claim's empty object with If-None-Match: *, which AWS S3,
// MinIO and SeaweedFS honour atomically: of concurrent callers on any number
// of nodes exactly one succeeds, the others get storage.ErrExists
// (TestClaimExactUnderConcurrency races two clients on SeaweedFS).
func (s *Store) Claim(ctx context.Context, c storage.Claim) error {
	key, err := claimKey(c)
	if err != nil {
		return fmt.Errorf("s3: claim: %w", err)
	}
	var opts minio.PutObjectOptions
	opts.SetMatchETagExcept("*")
	if _, err := s.core.PutObject(ctx, s.bucket, key, bytes.NewReader(nil), 0, "", "", opts); err != nil {
		return fmt.Errorf("s3: claim %s/%s: %w", c.Set, c.Name, mapError(err))
	}
	return nil
}

// Claimed asks for the claim's object with a HEAD (StatObject).
func (s *Store) Claimed(ctx context.Context, c storage.Claim) (bool, error) {
	key, err := claimKey(c)
	if err == nil {
		_, err = s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
		if err = mapError(err); errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("s3: claimed %s/%s: %w", c.Set, c.Name, err)
	}
	return true, nil
}

// Release deletes the claim's object (S3 deletes missing keys silently).
func (s *Store) Release(ctx context.Context, c storage.Claim) error {
	key, err := claimKey(c)
	if err == nil {
		err = mapError(s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}))
	}
	if err != nil {
		return fmt.Errorf("s3: release claim: %w", err)
	}
	return nil
}

// SweepClaims deletes the set's expired claims. Keys list in expiry order,
// so the sweep stops at the first live claim.
func (s *Store) SweepClaims(ctx context.Context, set string, now time.Time) (int, error) {
	key, err := claimKey(storage.Claim{Set: set, Name: "x", Expires: now})
	if err != nil {
		return 0, fmt.Errorf("s3: sweep claims: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the listing when the sweep stops early
	removed := 0
	opts := minio.ListObjectsOptions{Prefix: path.Dir(key) + "/", Recursive: true}
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, opts) {
		if obj.Err != nil {
			return removed, fmt.Errorf("s3: sweep claims: %w", mapError(obj.Err))
		}
		if !storage.ClaimExpired(path.Base(obj.Key), now) {
			break
		}
		if err := s.client.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return removed, fmt.Errorf("s3: sweep claims: %w", mapError(err))
		}
		removed++
	}
	return removed, nil
}

func claimKey(c storage.Claim) (string, error) {
	p, err := c.Path()
	if err != nil {
		return "", err
	}
	return storage.ClaimsDir + "/" + p, nil
}
