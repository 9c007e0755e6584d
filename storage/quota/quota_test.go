package quota_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/namespace"
	"github.com/mcpblob/mcpblob/storage/quota"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

const s3PartSize = 5 << 20

// stores runs fn on a new local store and a new S3 bucket.
func stores(t *testing.T, fn func(t *testing.T, raw storage.Backend)) {
	t.Run("local", func(t *testing.T) {
		s, err := localfs.Open(t.TempDir(), localfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Shared(t)
		s, err := s3.Open(t.Context(), s3.Options{
			Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
			Bucket: s3test.BucketName("quota"), CreateBucket: true, PartSize: s3PartSize,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
}

// node is one server's view of raw: its own ledger over the shared records.
func node(raw storage.Backend, lim quota.Limit) (storage.Backend, *quota.Ledger) {
	l := &quota.Ledger{Records: storage.RecorderOf(raw), Limits: quota.NewTable(lim)}
	return quota.Wrap(raw, l), l
}

func put(ctx context.Context, b storage.Backend, key string, data []byte, declare bool) error {
	opts := storage.CreateOptions{}
	if declare {
		opts.Size = int64(len(data))
	}
	w, err := b.Create(ctx, key, opts)
	if err != nil {
		return err
	}
	defer w.Abort(ctx)
	for len(data) > 0 {
		n := min(len(data), 64<<10)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	_, err = w.Commit(ctx)
	return err
}

func wantQuota(t *testing.T, err error, what string, fits int64) {
	t.Helper()
	var qe *storage.QuotaError
	if !errors.As(err, &qe) || qe.What != what || qe.Fits != fits {
		t.Fatalf("got %v, want a %s quota refusal with %d fitting", err, what, fits)
	}
}

func usage(t *testing.T, l *quota.Ledger, ns string) quota.Usage {
	t.Helper()
	u, err := l.Usage(t.Context(), ns)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestFillThenRefuse(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		ctx := t.Context()
		b, l := node(raw, quota.Limit{Bytes: 3 << 20, Objects: 3})
		view := namespace.View(b, "alice")
		two := bytes.Repeat([]byte("x"), 2<<20)
		if err := put(ctx, view, "a", two, true); err != nil {
			t.Fatal(err)
		}
		// Declared: refused at Create, before a byte.
		_, err := view.Create(ctx, "b", storage.CreateOptions{Size: 2 << 20})
		wantQuota(t, err, "bytes", 1<<20)
		// Undeclared: refused while streaming.
		wantQuota(t, put(ctx, view, "c", two, false), "bytes", 1<<20)
		for _, k := range []string{"b", "c"} {
			if _, err := view.Stat(ctx, k); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("%s: %v, want nothing stored", k, err)
			}
		}
		if u := usage(t, l, "alice"); u.Bytes != 2<<20 || u.Objects != 1 || u.HeldBytes != 0 || u.HeldObjects != 0 {
			t.Fatalf("usage %+v", u)
		}
		// Objects: two small ones fit, a third does not.
		for _, k := range []string{"s1", "s2"} {
			if err := put(ctx, view, k, []byte("s"), false); err != nil {
				t.Fatal(err)
			}
		}
		wantQuota(t, put(ctx, view, "s3", []byte("s"), true), "objects", 0)
		// Deleting gives the space back; another principal is not affected.
		if err := view.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := put(ctx, view, "b", two, true); err != nil {
			t.Fatal(err)
		}
		if err := put(ctx, namespace.View(b, "bob"), "a", two, false); err != nil {
			t.Fatal(err)
		}
		if u := usage(t, l, "alice"); u.Bytes != 2<<20+2 || u.Objects != 3 {
			t.Fatalf("usage %+v", u)
		}
	})
}

func TestReplaceCountsOnce(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		b, l := node(raw, quota.Limit{Bytes: 100})
		view := namespace.View(b, "alice")
		for _, n := range []int{10, 30, 20} {
			if err := put(t.Context(), view, "k", bytes.Repeat([]byte("y"), n), n != 30); err != nil {
				t.Fatal(err)
			}
		}
		if u := usage(t, l, "alice"); u.Bytes != 20 || u.Objects != 1 {
			t.Fatalf("usage %+v after replacing, want 20 bytes in 1 object", u)
		}
	})
}

// TestThreeNodesRace races uploads of one principal through three
// ledgers (three nodes) on one store: the usage never passes the quota
// and equals what is stored.
func TestThreeNodesRace(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		const limit = 1 << 20
		var nodes []storage.Backend
		var l *quota.Ledger
		for range 3 {
			b, ledger := node(raw, quota.Limit{Bytes: limit})
			nodes, l = append(nodes, namespace.View(b, "alice")), ledger
		}
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Go(func() {
				data := bytes.Repeat([]byte{byte(i)}, 100<<10+i*1000)
				err := put(t.Context(), nodes[i%3], fmt.Sprint("k", i), data, i%2 == 0)
				if err != nil && !errors.Is(err, storage.ErrQuotaExceeded) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		truth, err := quota.Scan(t.Context(), raw)
		if err != nil {
			t.Fatal(err)
		}
		u := usage(t, l, "alice")
		if u.Bytes > limit || u.Bytes != truth["alice"].Bytes || u.Objects != truth["alice"].Objects || u.HeldBytes != 0 {
			t.Fatalf("usage %+v, stored %+v, limit %d", u, truth["alice"], limit)
		}
		if u.Objects < 5 {
			t.Fatalf("only %d uploads fit of the ~9 that should", u.Objects)
		}
	})
}

// TestLimitsPrecedence: the operator's quota wins over a claimed one,
// which another node learns from the record; unset fields fall back to
// the default.
func TestLimitsPrecedence(t *testing.T) {
	ctx := t.Context()
	raw, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	t1, t2 := quota.NewTable(quota.Limit{Bytes: 100, Objects: 7}), quota.NewTable(quota.Limit{Bytes: 100, Objects: 7})
	l1 := &quota.Ledger{Records: storage.RecorderOf(raw), Limits: t1}
	l2 := &quota.Ledger{Records: storage.RecorderOf(raw), Limits: t2}
	b1, b2 := namespace.View(quota.Wrap(raw, l1), "carol"), namespace.View(quota.Wrap(raw, l2), "carol")
	t1.Claim("carol", quota.Limit{Bytes: 10})
	if err := put(ctx, b1, "a", []byte("0123456789"), true); err != nil {
		t.Fatal(err)
	}
	_, err = b2.Create(ctx, "b", storage.CreateOptions{Size: 1})
	wantQuota(t, err, "bytes", 0) // node 2 applies the claim node 1 saw
	if u := usage(t, l2, "carol"); u.Limit != (quota.Limit{Bytes: 10, Objects: 7}) {
		t.Fatalf("limit %+v", u.Limit)
	}
	t2.Replace(map[string]quota.Limit{"carol": {Bytes: 20}})
	if err := put(ctx, b2, "b", []byte("x"), true); err != nil {
		t.Fatalf("the operator's quota should win: %v", err)
	}
}

// TestHoldExpires: a reservation never committed nor aborted (its node
// died) stops counting after HoldTTL, so the space comes back.
func TestHoldExpires(t *testing.T) {
	ctx := t.Context()
	raw, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	now := time.Now()
	l := &quota.Ledger{Records: storage.RecorderOf(raw), Limits: quota.NewTable(quota.Limit{Bytes: 100}),
		HoldTTL: time.Minute, Now: func() time.Time { return now }}
	view := namespace.View(quota.Wrap(raw, l), "dave")
	if _, err := view.Create(ctx, "lost", storage.CreateOptions{Size: 80}); err != nil { // never finished
		t.Fatal(err)
	}
	_, err = view.Create(ctx, "next", storage.CreateOptions{Size: 80})
	wantQuota(t, err, "bytes", 20)
	now = now.Add(61 * time.Second)
	if u := usage(t, l, "dave"); u.HeldBytes != 0 || u.HeldObjects != 0 {
		t.Fatalf("usage %+v after the hold's TTL", u)
	}
	if err := put(ctx, view, "next", make([]byte, 80), true); err != nil {
		t.Fatalf("after the hold expired: %v", err)
	}
}

// TestStagedFastPathsForwarded: the counted Stager offers every fast path
// of the store's own (streamed writes, parts sent as they arrive, claims
// in memory), so tus through a quota takes the same path as without one.
func TestStagedFastPathsForwarded(t *testing.T) {
	stores(t, func(t *testing.T, raw storage.Backend) {
		b, _ := node(raw, quota.Limit{Bytes: 1 << 30})
		in, out := storage.StagerOf(raw), storage.StagerOf(b)
		if in == nil || out == nil {
			t.Fatalf("Stager: store %v, counted %v", in != nil, out != nil)
		}
		for _, c := range []struct {
			name    string
			in, out bool
		}{
			{"StagedStreamer", storage.StreamerOf(in) != nil, storage.StreamerOf(out) != nil},
			{"StagedSender", storage.SenderOf(in) != nil, storage.SenderOf(out) != nil},
			{"StagedClaimer", storage.ClaimerOf(in) != nil, storage.ClaimerOf(out) != nil},
		} {
			if c.in != c.out {
				t.Errorf("%s: the store has one: %v, the counted view: %v", c.name, c.in, c.out)
			}
		}
	})
}
