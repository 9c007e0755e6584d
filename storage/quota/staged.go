package quota

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// A staged write into a namespace has an id of its own, which carries
// what any node needs to count it: idMark, the reservation, the
// namespace and the backend's id, joined by idSep (a byte no namespace
// name or reservation id holds).
const (
	idMark = "q"
	idSep  = "~"
)

type stagedID struct{ hold, ns, inner string }

func (s stagedID) String() string { return idMark + idSep + s.hold + idSep + s.ns + idSep + s.inner }

// parseStagedID splits an id of this package; ok is false for a
// backend's own id (a write outside the namespaces, or begun before
// quotas were on), which passes through uncounted.
func parseStagedID(id string) (s stagedID, ok bool) {
	parts := strings.SplitN(id, idSep, 4)
	if len(parts) != 4 || parts[0] != idMark {
		return stagedID{}, false
	}
	return stagedID{hold: parts[1], ns: parts[2], inner: parts[3]}, true
}

// Stager returns the wrapped backend's staged writes, counted, or nil
// when it has none.
func (w *backend) Stager() storage.Stager {
	s := storage.StagerOf(w.b)
	if s == nil {
		return nil
	}
	return stager{w: w, s: s}
}

type stager struct {
	w *backend
	s storage.Stager
}

// BeginStaged reserves opts.Size (refused here when it does not fit) or
// nothing yet, and one object, for as long as a resumable upload lives.
func (s stager) BeginStaged(ctx context.Context, key string, opts storage.CreateOptions) (string, error) {
	ns, _, ok := namespace.Split(key)
	if !ok {
		return s.s.BeginStaged(ctx, key, opts)
	}
	id := stagedID{hold: newHoldID(), ns: ns}
	held, err := s.w.l.grow(ctx, ns, need{id: id.hold, total: opts.Size, want: opts.Size, staged: true})
	if err != nil {
		return "", fmt.Errorf("quota: begin staged %q: %w", key, err)
	}
	if id.inner, err = s.s.BeginStaged(ctx, key, opts); err != nil {
		s.w.release(ctx, ns, id.hold)
		return "", err
	}
	s.w.staged.set(id.hold, held, s.w.renewAt(true))
	return id.String(), nil
}

// renewAt is when a reservation taken now (a resumable upload's when
// staged) should be renewed: halfway through its life.
func (w *backend) renewAt(staged bool) time.Time { return time.Now().Add(w.l.ttl(staged) / 2) }

// cover makes the reservation of id hold the bytes up to end before
// they are staged (and renews it); a cached answer saves the look-up.
func (s stager) cover(ctx context.Context, id stagedID, end int64) error {
	if s.w.staged.covers(id.hold, end) {
		return nil
	}
	held, err := s.w.l.grow(ctx, id.ns, need{id: id.hold, total: end, want: nextWant(end), staged: true})
	if err != nil {
		return err
	}
	s.w.staged.set(id.hold, held, s.w.renewAt(true))
	return nil
}

// coverTo is cover for a staged write's id as its callers hold it: the
// backend's id to write with, its reservation made to hold the bytes up
// to end first (an id not of this wrapper passes as it is).
func (s stager) coverTo(ctx context.Context, id string, end int64) (string, error) {
	sid, ok := parseStagedID(id)
	if !ok {
		return id, nil
	}
	return sid.inner, s.cover(ctx, sid, end)
}

// innerID is the backend's id of a staged write.
func innerID(id string) string {
	if sid, ok := parseStagedID(id); ok {
		return sid.inner
	}
	return id
}

func (s stager) PutStaged(ctx context.Context, id string, number int, offset int64, data []byte) (storage.StagedPart, error) {
	inner, err := s.coverTo(ctx, id, offset+int64(len(data)))
	if err != nil {
		return storage.StagedPart{}, err
	}
	return s.s.PutStaged(ctx, inner, number, offset, data)
}

func (s stager) StagedPartMin() int { return s.s.StagedPartMin() }

// CommitStaged counts the parts' bytes and the object, then commits;
// a failed commit gives them back, but for a staged write already gone.
func (s stager) CommitStaged(ctx context.Context, id string, parts []storage.StagedPart, opts storage.CreateOptions, sha string) (storage.Info, error) {
	sid, ok := parseStagedID(id)
	if !ok {
		return s.s.CommitStaged(ctx, id, parts, opts, sha)
	}
	n := storage.StagedSize(parts)
	if err := s.w.l.settle(ctx, sid.ns, sid.hold, n, 1); err != nil {
		return storage.Info{}, err
	}
	s.w.staged.drop(sid.hold)
	info, err := s.s.CommitStaged(ctx, sid.inner, parts, opts, sha)
	// A staged write gone may have been committed (by a completion whose
	// answer was lost): its bytes stay counted, over rather than under.
	if err != nil && !errors.Is(err, storage.ErrStagedGone) {
		cctx, cancel := detached(ctx)
		defer cancel()
		_ = s.w.l.charge(cctx, sid.ns, -n, -1)
	}
	return info, err
}

// AbortStaged removes the staged write and drops its reservation.
func (s stager) AbortStaged(ctx context.Context, id string) error {
	sid, ok := parseStagedID(id)
	if !ok {
		return s.s.AbortStaged(ctx, id)
	}
	err := s.s.AbortStaged(ctx, sid.inner)
	s.w.staged.drop(sid.hold)
	s.w.release(ctx, sid.ns, sid.hold)
	return err
}

// StagedStreamer gives the wrapped Stager's StagedStreamer, counted;
// nil when it has none.
func (s stager) StagedStreamer() storage.StagedStreamer {
	st := storage.StreamerOf(s.s)
	if st == nil {
		return nil
	}
	return streamer{stager: s, st: st}
}

type streamer struct {
	stager
	st storage.StagedStreamer
}

func (s streamer) WriteStaged(ctx context.Context, id string, number int, offset int64, data []byte) error {
	inner, err := s.coverTo(ctx, id, offset+int64(len(data)))
	if err != nil {
		return err
	}
	return s.st.WriteStaged(ctx, inner, number, offset, data)
}

func (s streamer) SyncStaged(ctx context.Context, id string, number int, offset, size int64) (storage.StagedPart, error) {
	return s.st.SyncStaged(ctx, innerID(id), number, offset, size)
}

// heldCache remembers, on this node, how many bytes a resumable
// upload's reservation held when last seen, so parts inside it need no
// look-up. Reservations only grow until they end, so a stale entry only
// costs a look-up. It forgets everything past maxCached entries.
type heldCache struct {
	mu sync.Mutex
	m  map[string]cached
}

type cached struct {
	held    int64
	renewAt time.Time // past it, a look-up renews the reservation
}

const maxCached = 10000

func newHeldCache() *heldCache { return &heldCache{m: map[string]cached{}} }

func (c *heldCache) covers(hold string, end int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hold]
	return ok && end <= e.held && time.Now().Before(e.renewAt)
}

func (c *heldCache) set(hold string, held int64, renewAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[hold] = cached{held, renewAt}
}

func (c *heldCache) drop(hold string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, hold)
}

// StagedSender gives the wrapped Stager's StagedSender, counted (the
// part's whole size is covered before its first byte is sent); nil when
// it has none.
func (s stager) StagedSender() storage.StagedSender {
	se := storage.SenderOf(s.s)
	if se == nil {
		return nil
	}
	return sender{stager: s, se: se}
}

type sender struct {
	stager
	se storage.StagedSender
}

func (s sender) SendStaged(ctx context.Context, id string, number int, offset, size int64, r io.Reader) (storage.StagedPart, error) {
	inner, err := s.coverTo(ctx, id, offset+size)
	if err != nil {
		return storage.StagedPart{}, err
	}
	return s.se.SendStaged(ctx, inner, number, offset, size, r)
}

// StagedClaimer gives the wrapped Stager's StagedClaimer (a claim stores
// nothing: not counted); nil when it has none.
func (s stager) StagedClaimer() storage.StagedClaimer {
	c := storage.ClaimerOf(s.s)
	if c == nil {
		return nil
	}
	return claimer{c}
}

type claimer struct{ c storage.StagedClaimer }

// StagedReader gives the wrapped Stager's StagedReader (a read stores
// nothing: not counted); nil when it has none.
func (s stager) StagedReader() storage.StagedReader {
	r := storage.StagedReaderOf(s.s)
	if r == nil {
		return nil
	}
	return reader{r}
}

type reader struct{ r storage.StagedReader }

func (r reader) ReadStaged(ctx context.Context, id string, offset int64, p []byte) (int, error) {
	return r.r.ReadStaged(ctx, innerID(id), offset, p)
}

func (c claimer) ClaimStaged(ctx context.Context, id string, number int) error {
	return c.c.ClaimStaged(ctx, innerID(id), number)
}
