package lifecycle

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// clock is a clock for a Policy that moves only when told (from the
// time.Now of its first use), so that a slow store does not expire
// anything early.
type clock struct {
	base time.Time
	off  atomic.Int64
}

func (c *clock) now() time.Time {
	if c.base.IsZero() {
		c.base = time.Now()
	}
	return c.base.Add(time.Duration(c.off.Load()))
}
func (c *clock) advance(d time.Duration)        { c.off.Add(int64(d)) }
func newPolicy(c *clock, rules ...Rule) *Policy { return &Policy{Rules: rules, Now: c.now} }

// stores runs fn on each store: the local one and S3 (SeaweedFS).
func stores(t *testing.T, fn func(t *testing.T, b storage.Backend)) {
	t.Run("localfs", func(t *testing.T) {
		b, err := localfs.Open(t.TempDir(), localfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		fn(t, b)
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Shared(t)
		b, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey,
			SecretKey: srv.SecretKey, Bucket: s3test.BucketName("lc"), CreateBucket: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		fn(t, b)
	})
}

func putBlob(t *testing.T, b storage.Backend, key string, opts storage.CreateOptions) {
	t.Helper()
	w, err := b.Create(t.Context(), key, opts)
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	defer w.Abort(t.Context())
	if _, err := io.WriteString(w, "data of "+key); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(t.Context()); err != nil {
		t.Fatalf("Commit(%q): %v", key, err)
	}
}

func listed(t *testing.T, b storage.Backend, prefix string, limit int) []string {
	t.Helper()
	var keys []string
	cur := ""
	for {
		p, err := b.List(t.Context(), prefix, cur, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			keys = append(keys, it.Key)
		}
		if cur = p.NextCursor; cur == "" {
			return keys
		}
	}
}

// TestExpiredIsGone: a blob with a 2 s expiry is there before 2 s and
// gone for Stat, Open (whole and ranged) and List at 2 s, while the raw
// store still holds it; a rule expires a prefix (in a namespace too).
func TestExpiredIsGone(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		var c clock
		b := Wrap(raw, newPolicy(&c, Rule{Prefix: "uploads/", After: time.Hour}))
		ctx := t.Context()
		putBlob(t, b, "ttl/short", storage.CreateOptions{Expires: storage.Expiry(c.now(), 2*time.Second)})
		putBlob(t, b, "ttl/long", storage.CreateOptions{})
		putBlob(t, b, "uploads/a", storage.CreateOptions{})
		putBlob(t, b, ".ns/alice/uploads/b", storage.CreateOptions{})
		if _, err := b.Stat(ctx, "ttl/short"); err != nil {
			t.Fatalf("Stat before the expiry: %v", err)
		}
		if info, err := b.Stat(ctx, "uploads/a"); err != nil || !info.Expires.Equal(info.ModTime.Add(time.Hour)) {
			t.Errorf("Stat(uploads/a) = %+v, %v; want the rule's expiry, an hour after its write", info, err)
		}
		c.advance(2 * time.Second)
		for _, key := range []string{"ttl/short"} {
			if _, err := b.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Stat(%s) at 2 s: %v, want ErrNotFound", key, err)
			}
			for _, rng := range []*storage.Range{nil, {Offset: 1, Length: 2}} {
				if _, _, err := b.Open(ctx, key, rng); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Open(%s, %v) at 2 s: %v, want ErrNotFound", key, rng, err)
				}
			}
		}
		if got := strings.Join(listed(t, b, "ttl/", 0), " "); got != "ttl/long" {
			t.Errorf("List at 2 s = %q, want ttl/long alone", got)
		}
		if _, err := raw.Stat(ctx, "ttl/short"); err != nil {
			t.Errorf("raw Stat: %v; the store still holds it until a sweep", err)
		}
		c.advance(2 * time.Hour) // past the rule's hour after the writes (the store's clock)
		if got := strings.Join(listed(t, b, "", 1), " "); got != "ttl/long" {
			t.Errorf("List (pages of 1) after an hour = %q, want ttl/long alone (the rule took uploads/)", got)
		}
	})
}

// TestCreateIfNotExistsOverExpired: an expired blob does not block a
// create-if-absent of its key.
func TestCreateIfNotExistsOverExpired(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		var c clock
		b := Wrap(raw, newPolicy(&c))
		putBlob(t, b, "k", storage.CreateOptions{Expires: storage.Expiry(c.now(), time.Second)})
		c.advance(time.Second)
		putBlob(t, b, "k", storage.CreateOptions{IfNotExists: true})
		if _, err := b.Stat(t.Context(), "k"); err != nil {
			t.Fatalf("Stat of the new blob: %v", err)
		}
	})
}

// TestSweep: a sweep deletes the expired blobs from the store, and only
// them, with what it removed counted.
func TestSweep(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		var c clock
		p := newPolicy(&c, Rule{Prefix: "tmp/", After: time.Minute})
		b := Wrap(raw, p)
		putBlob(t, b, "a", storage.CreateOptions{Expires: storage.Expiry(c.now(), 2*time.Second)})
		putBlob(t, b, "b", storage.CreateOptions{})
		putBlob(t, b, "tmp/c", storage.CreateOptions{})
		putBlob(t, b, ".ns/bob/tmp/d", storage.CreateOptions{})
		var swept []string
		s := &Sweeper{Store: b, Policy: p, Every: time.Hour, Swept: func(i storage.Info) { swept = append(swept, i.Key) }}
		c.advance(2 * time.Second)
		r, err := s.SweepOnce(t.Context())
		if err != nil || !r.Turn || r.Removed != 1 || !r.Done {
			t.Fatalf("first sweep = %+v, %v; want its turn, 1 removed, done", r, err)
		}
		if _, err := raw.Stat(t.Context(), "a"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("raw Stat(a) after the sweep: %v, want ErrNotFound", err)
		}
		c.advance(time.Hour) // the next round, past the rule's minute
		r, err = s.SweepOnce(t.Context())
		if err != nil || r.Removed != 2 || r.Bytes == 0 {
			t.Fatalf("second sweep = %+v, %v; want tmp/c and bob's tmp/d removed", r, err)
		}
		if got := strings.Join(listed(t, raw, "", 0), " "); got != "b" {
			t.Errorf("the store holds %q after the sweeps, want b alone", got)
		}
		if got := strings.Join(swept, " "); got != ".ns/bob/tmp/d tmp/c" && got != "a .ns/bob/tmp/d tmp/c" {
			t.Errorf("Swept saw %q", got)
		}
	})
}

// TestSweepBounded: a round deletes at most Max blobs and looks at most
// at List objects; the next rounds go on until the store is clean.
func TestSweepBounded(t *testing.T) {
	var c clock
	raw, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p := newPolicy(&c)
	b := Wrap(raw, p)
	for i := range 7 {
		putBlob(t, b, "x/"+string(rune('a'+i)), storage.CreateOptions{Expires: storage.Expiry(c.now(), time.Second)})
	}
	s := &Sweeper{Store: b, Policy: p, Every: time.Hour, Max: 3, List: 5}
	c.advance(time.Second)
	var removed []int
	for range 4 {
		r, err := s.SweepOnce(t.Context())
		if err != nil || !r.Turn || r.Removed > 3 || r.Listed > 5 {
			t.Fatalf("sweep = %+v, %v; want at most 3 removed of at most 5 looked at", r, err)
		}
		removed = append(removed, r.Removed)
		c.advance(time.Hour)
	}
	if got := listed(t, raw, "", 0); len(got) != 0 {
		t.Errorf("after 4 rounds the store holds %q; removed per round %v", got, removed)
	}
}

// TestOneSweeperPerRound: two nodes on one store sweep the same round; the
// round's claim lets exactly one in, even while the other's sweep is
// still running (its delete blocks here until the second has tried).
func TestOneSweeperPerRound(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		var c clock
		p := newPolicy(&c)
		b := Wrap(raw, p)
		putBlob(t, b, "gone", storage.CreateOptions{Expires: storage.Expiry(c.now(), time.Second)})
		c.advance(time.Second)
		release := make(chan struct{})
		inDelete := make(chan struct{})
		var active atomic.Int32
		del := func(ctx context.Context, key string) error {
			if active.Add(1) > 1 {
				t.Error("two sweepers deleting at once")
			}
			defer active.Add(-1)
			close(inDelete)
			<-release
			return b.Delete(ctx, key)
		}
		first := &Sweeper{Store: b, Policy: p, Every: time.Hour, Delete: del}
		second := &Sweeper{Store: Wrap(raw, p), Policy: p, Every: time.Hour, Delete: del}
		done := make(chan Round)
		go func() {
			r, err := first.SweepOnce(context.Background())
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		<-inDelete
		r2, err := second.SweepOnce(t.Context())
		close(release)
		r1 := <-done
		if err != nil || r2.Turn || r2.Listed != 0 {
			t.Errorf("second node's sweep = %+v, %v; want no turn (the first holds the round's claim)", r2, err)
		}
		if !r1.Turn || r1.Removed != 1 {
			t.Errorf("first node's sweep = %+v, want its turn and 1 removed", r1)
		}
		claimed, err := raw.(storage.Claimer).Claimed(t.Context(), storage.Claim{Set: SweepSet,
			Name: "round-" + itoa(c.now().Truncate(time.Hour).Unix()), Expires: c.now().Truncate(time.Hour).Add(2 * time.Hour)})
		if err != nil || !claimed {
			t.Errorf("the round's claim: %v, %v; want it recorded", claimed, err)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestSweepEndsWithItsRound: the sweep's context ends when its round does,
// so the next round's sweeper (whose claim is another) never runs beside it.
func TestSweepEndsWithItsRound(t *testing.T) {
	var c clock
	raw, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p := newPolicy(&c)
	b := Wrap(raw, p)
	putBlob(t, b, "k", storage.CreateOptions{Expires: storage.Expiry(c.now(), time.Second)})
	c.advance(time.Second)
	var deadline time.Time
	s := &Sweeper{Store: b, Policy: p, Every: time.Hour, Delete: func(ctx context.Context, key string) error {
		deadline, _ = ctx.Deadline()
		return b.Delete(ctx, key)
	}}
	if r, err := s.SweepOnce(t.Context()); err != nil || r.Removed != 1 {
		t.Fatalf("sweep = %+v, %v", r, err)
	}
	if want := c.now().Truncate(time.Hour).Add(time.Hour); !deadline.Equal(want) {
		t.Errorf("the sweep's deadline = %v, want its round's end %v", deadline, want)
	}
}

// staleCounter is a StaleRemover that counts its calls.
type staleCounter struct{ calls atomic.Int32 }

func (s *staleCounter) RemoveStale(context.Context) int { s.calls.Add(1); return 1 }

// TestStaleRemovedOnTurnOnly: the store's leftovers of crashed writers
// are removed in the rounds this node sweeps, not in a round another node
// holds.
func TestStaleRemovedOnTurnOnly(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		var c clock
		p := newPolicy(&c)
		var a, b staleCounter
		first := &Sweeper{Store: Wrap(raw, p), Policy: p, Every: time.Hour, Stale: &a}
		second := &Sweeper{Store: Wrap(raw, p), Policy: p, Every: time.Hour, Stale: &b}
		r1, err1 := first.SweepOnce(t.Context())
		r2, err2 := second.SweepOnce(t.Context())
		if err1 != nil || err2 != nil || !r1.Turn || r2.Turn {
			t.Fatalf("rounds %+v, %v and %+v, %v; want the first node's turn only", r1, err1, r2, err2)
		}
		if a.calls.Load() != 1 || b.calls.Load() != 0 || r1.Stale != 1 {
			t.Errorf("RemoveStale called %d times on the sweeping node (round says %d), %d on the other; want 1, 0",
				a.calls.Load(), r1.Stale, b.calls.Load())
		}
	})
}
