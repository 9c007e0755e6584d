package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// maxRefills bounds the extra pages List reads to fill a page that
// expired blobs thinned.
const maxRefills = 4

// Backend is a storage.Backend that hides expired blobs (see Wrap).
type Backend struct {
	b storage.Backend
	p *Policy
}

// Wrap returns b with the blobs that policy says expired gone for
// readers: Stat and Open answer storage.ErrNotFound for them, List leaves
// them out (the Info of the others carries their effective expiry), and Create with IfNotExists removes an expired blob in the
// way first. Delete removes an expired blob as any other (it still holds
// space until then). The optional interfaces pass through: Presigner and
// Claimer exactly when b has them, a Recorder and a Stager through
// storage.RecorderOf and storage.StagerOf.
func Wrap(b storage.Backend, policy *Policy) storage.Backend {
	base := &Backend{b: b, p: policy}
	p, presigns := b.(storage.Presigner)
	c, claims := b.(storage.Claimer)
	switch {
	case presigns && claims:
		return struct {
			*Backend
			storage.Presigner
			storage.Claimer
		}{base, p, c}
	case presigns:
		return struct {
			*Backend
			storage.Presigner
		}{base, p}
	case claims:
		return struct {
			*Backend
			storage.Claimer
		}{base, c}
	}
	return base
}

// Unwrap returns the backend Wrap was given, which shows expired blobs
// (the sweeper lists it).
func (w *Backend) Unwrap() storage.Backend { return w.b }

// Policy returns the policy the backend applies.
func (w *Backend) Policy() *Policy { return w.p }

// notFound is what an expired blob answers.
func notFound(op, key string) error {
	return fmt.Errorf("lifecycle: %s %q: expired: %w", op, storage.TruncateKey(key), storage.ErrNotFound)
}

// effective sets info.Expires to when the policy expires it (its own
// expiry or a rule's, the earliest) and reports whether that has passed.
func (w *Backend) effective(info *storage.Info, now time.Time) (expired bool) {
	info.Expires = w.p.Expiry(*info)
	return !info.Expires.IsZero() && !info.Expires.After(now)
}

// Stat answers storage.ErrNotFound for an expired blob; a live one's
// Info.Expires is its effective expiry (a rule's, when earlier).
func (w *Backend) Stat(ctx context.Context, key string) (storage.Info, error) {
	info, err := w.b.Stat(ctx, key)
	if err == nil && w.effective(&info, w.p.now()) {
		return storage.Info{}, notFound("stat", key)
	}
	return info, err
}

// Open answers as Stat does.
func (w *Backend) Open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	rc, info, err := w.b.Open(ctx, key, rng)
	if err == nil && w.effective(&info, w.p.now()) {
		rc.Close()
		return nil, storage.Info{}, notFound("open", key)
	}
	return rc, info, err
}

// Create removes an expired blob under key first when opts.IfNotExists
// is set, so that it does not count as existing.
func (w *Backend) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	if opts.IfNotExists {
		if err := w.clearExpired(ctx, key); err != nil {
			return nil, err
		}
	}
	return w.b.Create(ctx, key, opts)
}

// clearExpired deletes key when it holds an expired blob.
func (w *Backend) clearExpired(ctx context.Context, key string) error {
	info, err := w.b.Stat(ctx, key)
	if err != nil || !w.p.Expired(info, w.p.now()) {
		return nil // Create reports any real problem
	}
	if err := w.b.Delete(ctx, key); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

func (w *Backend) Delete(ctx context.Context, key string) error { return w.b.Delete(ctx, key) }

// List leaves out expired blobs. A page they thinned is filled from the
// next ones, up to maxRefills more listings (when limit is set); a page
// may still come back short, even empty, with a NextCursor.
func (w *Backend) List(ctx context.Context, prefix, cursor string, limit int) (storage.Page, error) {
	page, err := w.b.List(ctx, prefix, cursor, limit)
	if err != nil {
		return page, err
	}
	now := w.p.now()
	items := w.live(page.Items, now)
	for i := 0; i < maxRefills && limit > 0 && len(items) < limit && page.NextCursor != ""; i++ {
		page, err = w.b.List(ctx, prefix, page.NextCursor, limit-len(items))
		if err != nil {
			return storage.Page{}, err
		}
		items = append(items, w.live(page.Items, now)...)
	}
	return storage.Page{Items: items, NextCursor: page.NextCursor}, nil
}

// live returns the items not expired at now, in place.
func (w *Backend) live(items []storage.Info, now time.Time) []storage.Info {
	out := items[:0]
	for _, it := range items {
		if !w.effective(&it, now) {
			out = append(out, it)
		}
	}
	return out
}

func (w *Backend) Close() error { return w.b.Close() }

// Recorder returns the wrapped backend's records (storage.RecorderOf).
func (w *Backend) Recorder() storage.Recorder { return storage.RecorderOf(w.b) }

// Stager returns the wrapped backend's staged writes (storage.StagerOf).
func (w *Backend) Stager() storage.Stager { return storage.StagerOf(w.b) }
