package blobs

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// restamp gives the blob info describes (just committed through a file
// sink, which opened its write before ttlSeconds was read: only string
// arguments come before a file) the expiry expires, by writing it again
// with it: one copy in the store. Until the copy commits the blob has no
// expiry; should the copy fail, it is deleted rather than kept forever.
func (a *App) restamp(ctx context.Context, be storage.Backend, info storage.Info, expires time.Time) (storage.Info, error) {
	stamped, err := copyWithExpiry(ctx, be, info, expires)
	if err != nil {
		if derr := be.Delete(ctx, info.Key); derr != nil {
			a.log.Error("blobs: a blob stored without its expiry could not be removed", "key", info.Key, "err", derr)
		}
		return storage.Info{}, fmt.Errorf("blobs: give %q its expiry: %w", info.Key, err)
	}
	return stamped, nil
}

func copyWithExpiry(ctx context.Context, be storage.Backend, info storage.Info, expires time.Time) (storage.Info, error) {
	rc, cur, err := be.Open(ctx, info.Key, nil)
	if err != nil {
		return storage.Info{}, err
	}
	defer rc.Close()
	w, err := be.Create(ctx, info.Key, storage.CreateOptions{MediaType: cur.MediaType, Filename: cur.Filename,
		Size: cur.Size, Expires: expires})
	if err != nil {
		return storage.Info{}, err
	}
	defer w.Abort(ctx)
	if _, err := io.Copy(w, rc); err != nil {
		return storage.Info{}, err
	}
	return w.Commit(ctx)
}
