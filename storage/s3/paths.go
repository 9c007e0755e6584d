package s3

import (
	"context"
	"errors"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
)

// checkPaths keeps the rule every backend shares although S3 itself has no
// folders: an object "a" and objects "a/…" exclude each other (a local store
// maps keys to files and folders, so a bucket that broke the rule could not
// move to one). It returns a *storage.PathConflictError when an object is a
// parent of key, or objects exist under key + "/": one HEAD per parent and
// one LIST. The check is not atomic with the write (S3 has no condition
// over several keys): writers of conflicting keys racing each other may
// both succeed. Create and Commit check, so the window is the commit.
func (s *Store) checkPaths(ctx context.Context, key string) error {
	for _, p := range storage.Parents(key) {
		_, err := s.client.StatObject(ctx, s.bucket, p, minio.StatObjectOptions{})
		switch err = mapError(err); {
		case err == nil:
			return &storage.PathConflictError{Key: key, Conflict: p}
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{Prefix: key + "/", Recursive: true, MaxKeys: 1}
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, opts) {
		if obj.Err != nil {
			return mapError(obj.Err)
		}
		return &storage.PathConflictError{Key: key, Conflict: key + "/"}
	}
	return nil
}
