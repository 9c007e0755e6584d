package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/cachewatch"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
	"github.com/mcpblob/mcpblob/core/token"
)

// The stream cache (--stream-cache; Options.Cache): the decoded bytes of
// a downloadUrl GET are teed into the store while they go to the client,
// committed only when the upstream's answer decoded cleanly, for the
// principal of the link, keyed by the upstream and the resource URI.
// Within the TTL, a later downloadUrl GET of the same principal and URI is
// answered with a 302 to the store's link (core/server's: a /d link of the
// blob service: Range, If-Range, ETag, sendfile or a presigned redirect)
// without calling the upstream. A notifications/resources/updated the
// relay sees in an upstream's SSE stream (cache_watch.go) drops the entry.
//
// Freshness (cache_fresh.go): an entry is served until the earlier of the
// TTL and the 2026-07-28 ttlMs of the resources/read answer that stored it
// (ttlMs 0: not stored), and is dropped at its next lookup once a relayed
// resources/list or resources/read answer showed this node another
// version of its URI for its principal than the one it was stored with.

// DefaultCacheTTL is the CLI's --stream-cache-ttl: how long a cached
// resource is served without asking the upstream. An upstream that
// announces changes (notifications/resources/updated) invalidates sooner;
// one that does not is trusted for at most this long.
const DefaultCacheTTL = 10 * time.Minute

// CacheOptions configure the stream cache; the zero value is off.
type CacheOptions struct {
	// On turns the cache on (the CLI's default).
	On bool
	// Store keeps the cached resources. Required with On.
	Store CacheStore
	// TTL is how long an entry is served after it was stored. Default
	// DefaultCacheTTL.
	TTL time.Duration
}

// CacheKey names one cached resource: the principal whose download stored
// it, the upstream and the resource URI.
type CacheKey struct {
	Principal string
	Upstream  string
	URI       string
}

// CacheStore keeps the stream cache's entries (core/server's: the server's
// backend, in the principal's namespace).
type CacheStore interface {
	// Create begins the entry of key (replacing any at Commit); mediaType
	// is the resource's media type as known at the first byte ("":
	// sniffed).
	Create(ctx context.Context, key CacheKey, mediaType string) (CacheWriter, error)
	// Link returns a short-lived URL of the entry's raw bytes (serving one
	// response when singleUse) and its facts, or an error wrapping
	// ErrOffloadNotFound.
	Link(ctx context.Context, key CacheKey, singleUse bool) (string, CacheInfo, error)
	// Delete removes the entry (none: nil).
	Delete(ctx context.Context, key CacheKey) error
}

// CacheWriter is one entry being stored.
type CacheWriter interface {
	io.Writer
	// Commit makes the entry visible with its facts.
	Commit(ctx context.Context, facts CacheFacts) error
	// Abort discards it (safe after Commit: it does nothing then).
	Abort()
}

// CacheFacts are what the gateway records with an entry.
type CacheFacts struct {
	// Expires is when the entry stops being served (zero: Stored + TTL).
	Expires time.Time
	// Version is the resource's version as its answer gave it ("": none;
	// see cache_fresh.go).
	Version string
}

// CacheInfo describes a cached entry.
type CacheInfo struct {
	Size   int64
	Stored time.Time
	CacheFacts
}

// CacheMetrics is implemented by a Metrics that counts the stream cache's
// events (core/metrics does).
type CacheMetrics interface {
	// StreamCache counts one event: "hit", "miss", "store" or
	// "invalidation".
	StreamCache(event string)
}

// streamCache is the gateway's cache state. epochs keep an entry from
// being committed by a download that began before an invalidation of its
// key: each invalidation bumps its key's slot (a fixed array, so a flood
// of notifications keeps memory flat; two keys sharing a slot only skip a
// store).
type streamCache struct {
	opts     CacheOptions
	metrics  CacheMetrics
	seed     maphash.Seed
	epochs   [4096]atomic.Uint64
	versions cachewatch.Table // cache_fresh.go
}

func (g *Gateway) initCache() error {
	o := g.opts.Cache
	if !o.On {
		return nil
	}
	if o.Store == nil {
		return errors.New("gateway: Options.Cache.Store is required with Cache.On")
	}
	o.TTL = positive(o.TTL, DefaultCacheTTL)
	m, _ := g.metrics.(CacheMetrics)
	if m == nil {
		m = noCacheMetrics{}
	}
	g.cache = &streamCache{opts: o, metrics: m, seed: maphash.MakeSeed()}
	return nil
}

type noCacheMetrics struct{}

func (noCacheMetrics) StreamCache(string) {}

func (sc *streamCache) epoch(k CacheKey) *atomic.Uint64 {
	return &sc.epochs[sc.hash(k.Principal, k.URI)%uint64(len(sc.epochs))]
}

// hash is the hash of principal's uri.
func (sc *streamCache) hash(principal, uri string) uint64 {
	var h maphash.Hash
	h.SetSeed(sc.seed)
	_, _ = h.WriteString(principal)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(uri)
	return h.Sum64()
}

// cacheKey is the key of the download of c.
func (g *Gateway) cacheKey(c token.Claims) CacheKey {
	return CacheKey{Principal: c.Principal, Upstream: g.Upstream(), URI: c.Object}
}

// serveCached answers a downloadUrl GET from the cache: a 302 to the
// entry's link. It reports false (nothing answered) on a miss, an expired
// entry, an entry over the link's maxStreamSize (the upstream path answers
// that limit as before), or a store failure.
func (g *Gateway) serveCached(w ResponseWriter, c token.Claims) bool {
	if g.cache == nil {
		return false
	}
	k := g.cacheKey(c)
	link, info, err := g.cache.opts.Store.Link(context.Background(), k, c.SingleUse)
	switch {
	case err == nil && g.cache.stale(k, info):
		_ = g.cache.opts.Store.Delete(context.Background(), k)
		err = ErrOffloadNotFound
	case err == nil && c.MaxSize > 0 && info.Size > c.MaxSize:
		err = ErrOffloadNotFound
	case err != nil && !errors.Is(err, ErrOffloadNotFound):
		g.log.Warn("gateway: stream cache lookup failed", "err", err)
	}
	if err != nil {
		g.cache.metrics.StreamCache("miss")
		return false
	}
	g.cache.metrics.StreamCache("hit")
	w.SetStatus(http.StatusFound)
	w.AddHeader("Location", link)
	w.AddHeader("Cache-Control", "no-store")
	if safeHeader(c.Object) {
		w.AddHeader(resstream.HeaderResourceURI, c.Object)
	}
	return true
}

// invalidate drops principal's entry of uri.
func (g *Gateway) invalidate(principal, uri string) {
	k := CacheKey{Principal: principal, Upstream: g.Upstream(), URI: uri}
	g.cache.epoch(k).Add(1)
	if err := g.cache.opts.Store.Delete(context.Background(), k); err != nil {
		g.log.Warn("gateway: dropping a stream cache entry failed", "err", err)
	}
	g.cache.metrics.StreamCache("invalidation")
}

// cacheTee is one download's copy into the cache, used on the decoding
// goroutine only: begun at the first byte, with the media type known
// then; a store failure drops the copy, never the download.
type cacheTee struct {
	g        *Gateway
	key      CacheKey
	epoch    uint64
	began    time.Time
	modern   bool // a 2026-07-28 download: its answer's ttlMs counts
	mimeType func() string
	ctx      context.Context
	cancel   context.CancelFunc
	w        CacheWriter
	failed   bool
}

// cacheEpoch is the invalidation count of c's entry, read before the
// upstream is asked for the resource: a resources/updated relayed after
// that, while the answer is on its way (before its first byte too), keeps
// the download from being stored. 0 without a cache.
func (g *Gateway) cacheEpoch(c token.Claims) uint64 {
	if g.cache == nil {
		return 0
	}
	return g.cache.epoch(g.cacheKey(c)).Load()
}

// newTee returns the tee of c's download, nil without a cache; epoch is
// cacheEpoch's, from before the upstream was asked.
func (g *Gateway) newTee(c token.Claims, epoch uint64, mimeType func() string) *cacheTee {
	if g.cache == nil {
		return nil
	}
	k := g.cacheKey(c)
	var st streamState
	_ = json.Unmarshal(c.Data, &st) // verified by ServeDownload
	ctx, cancel := context.WithCancel(context.Background())
	return &cacheTee{g: g, key: k, epoch: epoch, began: time.Now(), modern: st.Modern,
		mimeType: mimeType, ctx: ctx, cancel: cancel}
}

// writer is dst, teed into the cache (dst itself for a nil tee).
func (t *cacheTee) writer(dst io.Writer) io.Writer {
	if t == nil {
		return dst
	}
	return teeWriter{dst: dst, t: t}
}

type teeWriter struct {
	dst io.Writer
	t   *cacheTee
}

// Write gives p to the client first: the cache only gets bytes the client
// took.
func (w teeWriter) Write(p []byte) (int, error) {
	n, err := w.dst.Write(p)
	if n > 0 {
		w.t.write(p[:n])
	}
	return n, err
}

func (t *cacheTee) write(p []byte) {
	if t.failed {
		return
	}
	if t.w == nil {
		w, err := t.g.cache.opts.Store.Create(t.ctx, t.key, t.mimeType())
		if err != nil {
			t.drop(err)
			return
		}
		t.w = w
	}
	if _, err := t.w.Write(p); err != nil {
		t.drop(err)
	}
}

func (t *cacheTee) drop(err error) {
	t.failed = true
	if t.w != nil {
		t.w.Abort()
	}
	t.g.log.Warn("gateway: storing a stream cache entry failed", "err", err)
}

// finish commits the entry when the decode ended cleanly (decodeErr nil),
// the answer allows caching (fr: ttlMs not 0, in 2026-07-28) and no
// invalidation of its key came meanwhile; else it discards it.
func (t *cacheTee) finish(fr Freshness, decodeErr error) {
	if t == nil {
		return
	}
	defer t.cancel()
	if !t.modern {
		fr.TTLGiven = false // not a 2025-11-25 member (go-sdk sends "ttlMs":0 in both eras)
	}
	switch {
	case t.w == nil || t.failed:
		return
	case decodeErr != nil || t.g.cache.epoch(t.key).Load() != t.epoch || (fr.TTLGiven && fr.TTLMs == 0):
		t.w.Abort()
		return
	}
	facts := t.g.cache.facts(t.began, fr) // cache_fresh.go
	if err := t.w.Commit(t.ctx, facts); err != nil {
		t.g.log.Warn("gateway: storing a stream cache entry failed", "err", err)
		return
	}
	t.g.cache.versions.Set(t.g.cache.hash(t.key.Principal, t.key.URI), facts.Version)
	t.g.cache.metrics.StreamCache("store")
}

// syncString is a string set by one goroutine and read by another.
type syncString struct {
	mu sync.Mutex
	v  string
}

func (s *syncString) set(v string) { s.mu.Lock(); s.v = v; s.mu.Unlock() }

func (s *syncString) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}
