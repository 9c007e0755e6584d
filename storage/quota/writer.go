package quota

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// writer is an upload into a namespace: its bytes stay inside the
// reservation, which grows ahead of them when the size was not declared,
// and Commit turns it into usage before the object becomes visible.
type writer struct {
	storage.Writer
	ctx      context.Context // Create's: it bounds the whole write
	b        *backend
	ns, key  string
	id       string
	held     int64
	declared bool
	replaces bool      // the commit may replace an object (no IfNotExists)
	renewAt  time.Time // past it, the next Write renews the reservation
	err      error
	done     atomic.Bool // committed or aborted: the reservation is gone
}

// Write grows the reservation before bytes past it; past the quota it
// aborts the write (nothing is stored) and returns the
// *storage.QuotaError, also from every later call.
func (w *writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	total := w.Writer.Written() + int64(len(p))
	if !w.declared && total > w.held || time.Now().After(w.renewAt) {
		if err := w.grow(total); err != nil {
			w.err = err
			_ = w.Abort(w.ctx)
			return 0, err
		}
	}
	return w.Writer.Write(p)
}

// grow makes the reservation cover total bytes (a declared upload's
// stays its size) and renews it.
func (w *writer) grow(total int64) error {
	n := need{id: w.id, total: total, want: nextWant(total)}
	if w.declared {
		n.total, n.want = w.held, w.held
	}
	held, err := w.b.l.grow(w.ctx, w.ns, n)
	if err != nil {
		return err
	}
	w.held, w.renewAt = held, w.b.renewAt(false)
	return nil
}

// Commit counts the bytes written and the object, then makes the object
// visible; a failed commit gives them back, and a replaced object's size
// is given back after. A crash in between leaves the usage over the
// truth, never under.
func (w *writer) Commit(ctx context.Context) (storage.Info, error) {
	if w.err != nil {
		return storage.Info{}, w.err
	}
	if w.done.Load() {
		return storage.Info{}, storage.ErrClosed
	}
	n := w.Writer.Written()
	old, hadOld := w.previous(ctx)
	if err := w.b.l.settle(ctx, w.ns, w.id, n, 1); err != nil {
		_ = w.Abort(ctx)
		return storage.Info{}, err
	}
	w.done.Store(true)
	info, err := w.Writer.Commit(ctx)
	cctx, cancel := detached(ctx)
	defer cancel()
	switch {
	case err != nil:
		_ = w.b.l.charge(cctx, w.ns, -n, -1)
	case hadOld:
		_ = w.b.l.charge(cctx, w.ns, -old.Size, -1)
	}
	return info, err
}

// previous is the object the commit would replace, if any.
func (w *writer) previous(ctx context.Context) (storage.Info, bool) {
	if !w.replaces {
		return storage.Info{}, false
	}
	info, err := w.b.b.Stat(ctx, w.key)
	return info, err == nil
}

// Abort discards the bytes and drops the reservation.
func (w *writer) Abort(ctx context.Context) error {
	err := w.Writer.Abort(ctx)
	if !w.done.Swap(true) {
		w.b.release(ctx, w.ns, w.id)
	}
	return err
}
