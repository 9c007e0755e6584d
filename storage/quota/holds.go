package quota

import (
	"context"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// need is what a reservation asks of a namespace's record: that hold id
// cover at least total bytes (and want, if it fits), and, when it is new,
// one object.
type need struct {
	id     string
	total  int64
	want   int64
	staged bool
}

// grow makes reservation n.id hold at least n.total bytes (and up to
// n.want when they fit) and one object, creating it when missing, and
// renews it. Past the quota it changes nothing and returns a
// *storage.QuotaError. It returns the bytes the reservation holds.
func (l *Ledger) grow(ctx context.Context, ns string, n need) (held int64, err error) {
	ttl := l.ttl(n.staged)
	err = l.update(ctx, ns, func(r *record) error {
		now := l.now()
		i := r.find(n.id)
		if i >= 0 && r.Holds[i].Bytes >= n.total && r.Holds[i].Exp > now.Add(ttl/2).UnixMilli() {
			held = r.Holds[i].Bytes
			return errUnchanged
		}
		grant, qerr := l.fit(ns, r, i, n.total, max(n.want, n.total))
		if qerr != nil {
			return qerr
		}
		if i < 0 {
			r.Holds = append(r.Holds, hold{ID: n.id, Objects: 1})
			i = len(r.Holds) - 1
		}
		h := &r.Holds[i]
		h.Bytes, h.Exp = max(h.Bytes, grant), now.Add(ttl).UnixMilli()
		held = h.Bytes
		return nil
	})
	return held, err
}

// fit checks that hold i of r (-1: a new one, which also takes an object)
// may cover total bytes, and returns how many of want it may cover (at
// least total); past a quota it returns a *storage.QuotaError.
func (l *Ledger) fit(ns string, r *record, i int, total, want int64) (int64, error) {
	lim := l.limitOf(ns, r)
	heldBytes, heldObjects := r.held()
	own := int64(0)
	if i >= 0 {
		own = r.Holds[i].Bytes
	} else {
		if len(r.Holds) >= maxHolds {
			return 0, l.refuse(&storage.QuotaError{What: "uploads in flight", Limit: maxHolds, Usage: int64(len(r.Holds))})
		}
		if used := r.Objects + heldObjects; lim.Objects > 0 && used+1 > lim.Objects {
			return 0, l.refuse(&storage.QuotaError{What: "objects", Limit: lim.Objects, Usage: used, Fits: max(0, lim.Objects-used)})
		}
	}
	if lim.Bytes <= 0 {
		return want, nil
	}
	others := r.Bytes + heldBytes - own
	free := lim.Bytes - others
	if total > free {
		return 0, l.refuse(&storage.QuotaError{What: "bytes", Limit: lim.Bytes, Usage: others, Fits: max(0, free)})
	}
	return min(want, free), nil
}

func (l *Ledger) refuse(e *storage.QuotaError) error {
	if l.Refused != nil {
		l.Refused(e.What)
	}
	return e
}

// settle turns reservation id into usage of bytes and objects: the
// upload is about to become visible. A reservation that is gone
// (expired) is checked against the quota as a new one would be.
func (l *Ledger) settle(ctx context.Context, ns, id string, bytes, objects int64) error {
	err := l.update(ctx, ns, func(r *record) error {
		i := r.find(id)
		if i < 0 || bytes > r.Holds[i].Bytes {
			if _, err := l.fit(ns, r, i, bytes, bytes); err != nil {
				return err
			}
		}
		if i >= 0 {
			r.Holds = append(r.Holds[:i], r.Holds[i+1:]...)
		}
		r.Bytes += bytes
		r.Objects += objects
		return nil
	})
	if err == nil && l.Changed != nil {
		l.Changed(bytes, objects)
	}
	return err
}

// release drops reservation id; a missing one is not an error.
func (l *Ledger) release(ctx context.Context, ns, id string) error {
	return l.update(ctx, ns, func(r *record) error {
		i := r.find(id)
		if i < 0 {
			return errUnchanged
		}
		r.Holds = append(r.Holds[:i], r.Holds[i+1:]...)
		return nil
	})
}

// charge adds bytes and objects (negative: gives them back) to ns's
// usage, never below zero.
func (l *Ledger) charge(ctx context.Context, ns string, bytes, objects int64) error {
	err := l.update(ctx, ns, func(r *record) error {
		r.Bytes = max(0, r.Bytes+bytes)
		r.Objects = max(0, r.Objects+objects)
		return nil
	})
	if err == nil && l.Changed != nil {
		l.Changed(bytes, objects)
	}
	return err
}

// cleanupTimeout bounds a ledger write made after the caller's context
// may have ended (an abort, the give-back after a failed commit).
const cleanupTimeout = 10 * time.Second

// detached is ctx without its end, bounded by cleanupTimeout.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
