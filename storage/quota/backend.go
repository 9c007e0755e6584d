package quota

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// Wrap returns b with every write into a namespace (a raw key below
// namespace.Prefix) counted in l and refused past its quota, and every
// delete giving the space back. Keys outside the namespaces pass
// through uncounted. The result implements storage.Presigner and
// storage.Claimer exactly when b does, and gives b's Recorder and a
// counted Stager through storage.RecorderOf and storage.StagerOf.
func Wrap(b storage.Backend, l *Ledger) storage.Backend {
	base := &backend{b: b, l: l, staged: newHeldCache()}
	p, presigns := b.(storage.Presigner)
	c, claims := b.(storage.Claimer)
	switch {
	case presigns && claims:
		return struct {
			*backend
			presigner
			storage.Claimer
		}{base, presigner{p}, c}
	case presigns:
		return struct {
			*backend
			presigner
		}{base, presigner{p}}
	case claims:
		return struct {
			*backend
			storage.Claimer
		}{base, c}
	}
	return base
}

type backend struct {
	b      storage.Backend
	l      *Ledger
	staged *heldCache
}

// Ledger returns the ledger the backend counts in.
func (w *backend) Ledger() *Ledger { return w.l }

func (w *backend) Stat(ctx context.Context, key string) (storage.Info, error) {
	return w.b.Stat(ctx, key)
}

func (w *backend) Open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	return w.b.Open(ctx, key, rng)
}

func (w *backend) List(ctx context.Context, prefix, cursor string, limit int) (storage.Page, error) {
	return w.b.List(ctx, prefix, cursor, limit)
}

func (w *backend) Close() error { return w.b.Close() }

// Recorder returns the wrapped backend's records.
func (w *backend) Recorder() storage.Recorder { return storage.RecorderOf(w.b) }

// firstStep is the first reservation of an upload of undeclared size;
// each later one doubles what it holds, up to maxStep at a time.
const (
	firstStep = 64 << 10
	maxStep   = 64 << 20
)

// nextWant is what an upload of undeclared size that must hold total
// bytes asks for: total and a step that grows with it.
func nextWant(total int64) int64 {
	return total + min(max(total, firstStep), maxStep)
}

// Create reserves opts.Size (a declared size: refused here, before any
// byte, when it does not fit) or a first step, and one object.
func (w *backend) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	ns, _, ok := namespace.Split(key)
	if !ok {
		return w.b.Create(ctx, key, opts)
	}
	n := need{id: newHoldID(), total: opts.Size, want: opts.Size}
	if opts.Size <= 0 {
		n.want = nextWant(0)
	}
	held, err := w.l.grow(ctx, ns, n)
	if err != nil {
		return nil, fmt.Errorf("quota: create %q: %w", key, err)
	}
	wr, err := w.b.Create(ctx, key, opts)
	if err != nil {
		w.release(ctx, ns, n.id)
		return nil, err
	}
	return &writer{Writer: wr, ctx: ctx, b: w, ns: ns, key: key, id: n.id, held: held, declared: opts.Size > 0,
		replaces: !opts.IfNotExists, renewAt: w.renewAt(false)}, nil
}

// release drops a reservation after a failure, whatever ctx's state.
func (w *backend) release(ctx context.Context, ns, id string) {
	ctx, cancel := detached(ctx)
	defer cancel()
	_ = w.l.release(ctx, ns, id) // an expiry ends it otherwise
}

// Delete removes key and gives its size and object back to its
// namespace. A crash between the two leaves the usage over the truth,
// never under (Rebuild repairs it).
func (w *backend) Delete(ctx context.Context, key string) error {
	ns, _, ok := namespace.Split(key)
	if !ok {
		return w.b.Delete(ctx, key)
	}
	info, err := w.b.Stat(ctx, key)
	if err != nil {
		return err
	}
	if err := w.b.Delete(ctx, key); err != nil {
		return err
	}
	cctx, cancel := detached(ctx)
	defer cancel()
	if err := w.l.charge(cctx, ns, -info.Size, -1); err != nil {
		return fmt.Errorf("quota: %q deleted, but its usage stays counted: %w", key, err)
	}
	return nil
}

// presigner passes presigned reads through; a presigned write into a
// namespace would bypass the quota, so it is refused.
type presigner struct{ p storage.Presigner }

func (p presigner) PresignGet(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	return p.p.PresignGet(ctx, key, ttl, opts)
}

// errPresignPut refuses a presigned write into a namespace.
var errPresignPut = errors.New("quota: a presigned write into a namespace would bypass its quota")

func (p presigner) PresignPut(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	if _, _, ok := namespace.Split(key); ok {
		return nil, errPresignPut
	}
	return p.p.PresignPut(ctx, key, ttl, opts)
}
