package observed

import (
	"context"
	"errors"
	"io"
	"net/url"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Observer receives one call per operation: op is stat, get, put, delete,
// list, presign, claim, claimed, release, sweep, record_get, record_put,
// record_delete, record_list, staged_begin, staged_put, staged_write,
// staged_commit or staged_abort; outcome is ok, not_found, exists (also a conditional
// write that lost), error or, for a put given up by its caller (a
// refused or failed upload), aborted. A put is observed when its write
// commits or aborts, so its duration is the whole write.
type Observer func(ctx context.Context, op, outcome string, d time.Duration)

// Outcomes an Observer receives.
const (
	OK       = "ok"
	NotFound = "not_found"
	Exists   = "exists"
	Failed   = "error"
	Aborted  = "aborted"
)

// Outcome classifies a storage error: a missing object and a lost
// create-if-absent race are answers, not faults.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, storage.ErrNotFound):
		return NotFound
	case errors.Is(err, storage.ErrExists), errors.Is(err, storage.ErrPreconditionFailed):
		return Exists
	}
	return Failed
}

var (
	_ storage.Presigner = presigner{}
	_ storage.Claimer   = claimer{}
)

// Wrap returns b reporting to obs, implementing Presigner and Claimer
// exactly when b does.
func Wrap(b storage.Backend, obs Observer) storage.Backend {
	base := &backend{b: b, obs: obs}
	p, presigns := b.(storage.Presigner)
	c, claims := b.(storage.Claimer)
	switch {
	case presigns && claims:
		return struct {
			*backend
			presigner
			claimer
		}{base, presigner{p, obs}, claimer{c, obs}}
	case presigns:
		return struct {
			*backend
			presigner
		}{base, presigner{p, obs}}
	case claims:
		return struct {
			*backend
			claimer
		}{base, claimer{c, obs}}
	}
	return base
}

func observe(ctx context.Context, obs Observer, op string, start time.Time, err error) {
	obs(ctx, op, Outcome(err), time.Since(start))
}

type backend struct {
	b   storage.Backend
	obs Observer
}

func (w *backend) Stat(ctx context.Context, key string) (storage.Info, error) {
	start := time.Now()
	info, err := w.b.Stat(ctx, key)
	observe(ctx, w.obs, "stat", start, err)
	return info, err
}

// Open observes the time to open (the first byte's wait), not the read.
func (w *backend) Open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	start := time.Now()
	rc, info, err := w.b.Open(ctx, key, rng)
	observe(ctx, w.obs, "get", start, err)
	return rc, info, err
}

func (w *backend) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	start := time.Now()
	wr, err := w.b.Create(ctx, key, opts)
	if err != nil {
		observe(ctx, w.obs, "put", start, err)
		return nil, err
	}
	return &writer{Writer: wr, obs: w.obs, start: start, ctx: ctx}, nil
}

func (w *backend) Delete(ctx context.Context, key string) error {
	start := time.Now()
	err := w.b.Delete(ctx, key)
	observe(ctx, w.obs, "delete", start, err)
	return err
}

func (w *backend) List(ctx context.Context, prefix, cursor string, limit int) (storage.Page, error) {
	start := time.Now()
	p, err := w.b.List(ctx, prefix, cursor, limit)
	observe(ctx, w.obs, "list", start, err)
	return p, err
}

func (w *backend) Close() error { return w.b.Close() }

// Recorder returns the wrapped backend's records, observed (ops
// record_get, record_put, record_delete), or nil when it keeps none
// (storage.RecorderOf finds it).
func (w *backend) Recorder() storage.Recorder {
	r := storage.RecorderOf(w.b)
	if r == nil {
		return nil
	}
	return recorder{r, w.obs}
}

type recorder struct {
	r   storage.Recorder
	obs Observer
}

func (w recorder) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	start := time.Now()
	b, v, err := w.r.GetRecord(ctx, name)
	observe(ctx, w.obs, "record_get", start, err)
	return b, v, err
}

func (w recorder) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	start := time.Now()
	v, err := w.r.PutRecord(ctx, name, data, ifMatch)
	observe(ctx, w.obs, "record_put", start, err)
	return v, err
}

func (w recorder) ListRecords(ctx context.Context, dir string, fn func(string) bool) error {
	start := time.Now()
	err := w.r.ListRecords(ctx, dir, fn)
	observe(ctx, w.obs, "record_list", start, err)
	return err
}

func (w recorder) DeleteRecord(ctx context.Context, name string) error {
	start := time.Now()
	err := w.r.DeleteRecord(ctx, name)
	observe(ctx, w.obs, "record_delete", start, err)
	return err
}

// writer observes a put once, when it commits or aborts.
type writer struct {
	storage.Writer
	obs   Observer
	start time.Time
	ctx   context.Context // Create's, for the observer
	done  bool
}

func (w *writer) Commit(ctx context.Context) (storage.Info, error) {
	info, err := w.Writer.Commit(ctx)
	w.finish(Outcome(err))
	return info, err
}

func (w *writer) Abort(ctx context.Context) error {
	err := w.Writer.Abort(ctx)
	w.finish(Aborted)
	return err
}

// finish observes the put with outcome, unless it was observed already.
func (w *writer) finish(outcome string) {
	if !w.done {
		w.done = true
		w.obs(w.ctx, "put", outcome, time.Since(w.start))
	}
}

type presigner struct {
	p   storage.Presigner
	obs Observer
}

func (w presigner) PresignGet(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	start := time.Now()
	u, err := w.p.PresignGet(ctx, key, ttl, opts)
	observe(ctx, w.obs, "presign", start, err)
	return u, err
}

func (w presigner) PresignPut(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	start := time.Now()
	u, err := w.p.PresignPut(ctx, key, ttl, opts)
	observe(ctx, w.obs, "presign", start, err)
	return u, err
}

type claimer struct {
	c   storage.Claimer
	obs Observer
}

func (w claimer) Claim(ctx context.Context, c storage.Claim) error {
	start := time.Now()
	err := w.c.Claim(ctx, c)
	observe(ctx, w.obs, "claim", start, err)
	return err
}

func (w claimer) Claimed(ctx context.Context, c storage.Claim) (bool, error) {
	start := time.Now()
	ok, err := w.c.Claimed(ctx, c)
	observe(ctx, w.obs, "claimed", start, err)
	return ok, err
}

func (w claimer) Release(ctx context.Context, c storage.Claim) error {
	start := time.Now()
	err := w.c.Release(ctx, c)
	observe(ctx, w.obs, "release", start, err)
	return err
}

func (w claimer) SweepClaims(ctx context.Context, set string, now time.Time) (int, error) {
	start := time.Now()
	n, err := w.c.SweepClaims(ctx, set, now)
	observe(ctx, w.obs, "sweep", start, err)
	return n, err
}

// Stager returns the wrapped backend's staged writes, observed (ops
// staged_begin, staged_put, staged_write, staged_commit, staged_abort),
// or nil when it has none (storage.StagerOf finds it).
func (w *backend) Stager() storage.Stager {
	s := storage.StagerOf(w.b)
	if s == nil {
		return nil
	}
	return stager{s, w.obs}
}

type stager struct {
	s   storage.Stager
	obs Observer
}

func (w stager) BeginStaged(ctx context.Context, key string, opts storage.CreateOptions) (string, error) {
	start := time.Now()
	id, err := w.s.BeginStaged(ctx, key, opts)
	observe(ctx, w.obs, "staged_begin", start, err)
	return id, err
}

func (w stager) PutStaged(ctx context.Context, id string, number int, offset int64, data []byte) (storage.StagedPart, error) {
	start := time.Now()
	p, err := w.s.PutStaged(ctx, id, number, offset, data)
	observe(ctx, w.obs, "staged_put", start, err)
	return p, err
}

func (w stager) StagedPartMin() int { return w.s.StagedPartMin() }

func (w stager) CommitStaged(ctx context.Context, id string, parts []storage.StagedPart, opts storage.CreateOptions, sha string) (storage.Info, error) {
	start := time.Now()
	info, err := w.s.CommitStaged(ctx, id, parts, opts, sha)
	observe(ctx, w.obs, "staged_commit", start, err)
	return info, err
}

func (w stager) AbortStaged(ctx context.Context, id string) error {
	start := time.Now()
	err := w.s.AbortStaged(ctx, id)
	observe(ctx, w.obs, "staged_abort", start, err)
	return err
}

// StagedStreamer gives the wrapped Stager's StagedStreamer, observed
// (WriteStaged as staged_write, SyncStaged as staged_put); nil when it
// has none.
func (w stager) StagedStreamer() storage.StagedStreamer {
	s := storage.StreamerOf(w.s)
	if s == nil {
		return nil
	}
	return streamer{s, w.obs}
}

type streamer struct {
	s   storage.StagedStreamer
	obs Observer
}

func (w streamer) WriteStaged(ctx context.Context, id string, number int, offset int64, data []byte) error {
	start := time.Now()
	err := w.s.WriteStaged(ctx, id, number, offset, data)
	observe(ctx, w.obs, "staged_write", start, err)
	return err
}

func (w streamer) SyncStaged(ctx context.Context, id string, number int, offset, size int64) (storage.StagedPart, error) {
	start := time.Now()
	p, err := w.s.SyncStaged(ctx, id, number, offset, size)
	observe(ctx, w.obs, "staged_put", start, err)
	return p, err
}

// StagedSender gives the wrapped Stager's StagedSender, observed
// (SendStaged as staged_put); nil when it has none.
func (w stager) StagedSender() storage.StagedSender {
	s := storage.SenderOf(w.s)
	if s == nil {
		return nil
	}
	return sender{s, w.obs}
}

type sender struct {
	s   storage.StagedSender
	obs Observer
}

func (w sender) SendStaged(ctx context.Context, id string, number int, offset, size int64, r io.Reader) (storage.StagedPart, error) {
	start := time.Now()
	p, err := w.s.SendStaged(ctx, id, number, offset, size, r)
	observe(ctx, w.obs, "staged_put", start, err)
	return p, err
}

// StagedClaimer gives the wrapped Stager's StagedClaimer (claims touch
// no storage: not observed); nil when it has none.
func (w stager) StagedClaimer() storage.StagedClaimer { return storage.ClaimerOf(w.s) }

// StagedReader gives the wrapped Stager's StagedReader (a read back of
// bytes already counted as written: not observed); nil when it has none.
func (w stager) StagedReader() storage.StagedReader { return storage.StagedReaderOf(w.s) }
