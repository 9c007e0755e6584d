package budget

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPoolBoundsPrincipalAndNode(t *testing.T) {
	p := NewPool(Limit{Name: "sessions", PerPrincipal: 3, PerNode: 5}, nil)
	for i := 0; i < 3; i++ {
		if err := p.Take("alice", 1); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	var e *Exceeded
	if err := p.Take("alice", 1); !errors.As(err, &e) || e.Scope != PerPrincipal || e.Max != 3 || e.Name != "sessions" {
		t.Fatalf("4th take of alice = %v, want the principal bound", err)
	}
	if err := p.Take("bob", 2); err != nil {
		t.Fatalf("bob: %v", err)
	}
	if err := p.Take("carol", 1); !errors.As(err, &e) || e.Scope != PerNode || e.Max != 5 {
		t.Fatalf("carol at a full node = %v, want the node bound", err)
	}
	if p.Held("alice") != 3 || p.Total() != 5 {
		t.Fatalf("held %d total %d after refusals, want 3 and 5", p.Held("alice"), p.Total())
	}
	p.Give("alice", 3)
	if err := p.Take("carol", 1); err != nil {
		t.Fatalf("carol after alice gave back: %v", err)
	}
	if len(p.held) != 2 {
		t.Fatalf("the pool keeps %d principal entries, want 2 (alice's was dropped at zero)", len(p.held))
	}
}

func TestPoolUnbounded(t *testing.T) {
	p := NewPool(Limit{Name: "x"}, nil)
	if err := p.Take("a", 1<<40); err != nil {
		t.Fatal(err)
	}
}

func TestPoolGiveTooMuchPanics(t *testing.T) {
	p := NewPool(Limit{Name: "x", PerPrincipal: 2}, nil)
	_ = p.Take("a", 1)
	defer func() {
		if recover() == nil {
			t.Fatal("giving back more than was taken did not panic")
		}
	}()
	p.Give("a", 2)
}

func TestPoolConcurrentNeverPasses(t *testing.T) {
	p := NewPool(Limit{Name: "streams", PerPrincipal: 10, PerNode: 15}, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for i := 0; i < 64; i++ {
		wg.Add(1)
		who := []string{"a", "b"}[i%2]
		go func() {
			defer wg.Done()
			if p.Take(who, 1) == nil {
				mu.Lock()
				got[who]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got["a"] > 10 || got["b"] > 10 || got["a"]+got["b"] != 15 {
		t.Fatalf("taken %v, want each ≤ 10 and 15 in all", got)
	}
}

func TestRateWindow(t *testing.T) {
	r := NewRate("claims", 2, nil)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	for i := 0; i < 2; i++ {
		if err := r.Allow("a"); err != nil {
			t.Fatal(err)
		}
	}
	var e *Exceeded
	now = now.Add(20 * time.Second)
	if err := r.Allow("a"); !errors.As(err, &e) || e.RetryAfter != 40*time.Second || e.Max != 2 {
		t.Fatalf("third event = %v, want refused with 40s to wait", err)
	}
	if err := r.Allow("b"); err != nil {
		t.Fatalf("another principal: %v", err)
	}
	now = now.Add(40 * time.Second)
	if err := r.Allow("a"); err != nil {
		t.Fatalf("next window: %v", err)
	}
	now = now.Add(3 * time.Minute)
	_ = r.Allow("c")
	if len(r.windows) != 1 {
		t.Fatalf("%d windows kept after they ended, want only c's", len(r.windows))
	}
}

func TestRefusalLoggedOnceWithPrincipal(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	p := NewPool(Limit{Name: "subscriptions", PerPrincipal: 1}, log)
	_ = p.Take("alice", 1)
	for i := 0; i < 5; i++ {
		_ = p.Take("alice", 1)
	}
	out := buf.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "principal=alice") || !strings.Contains(out, "limit=subscriptions") {
		t.Fatalf("log = %q, want one WARN naming the limit and alice", out)
	}
}

func TestTakeAllIsAllOrNothingAndReleasesOnce(t *testing.T) {
	count := NewPool(Limit{Name: "subscriptions", PerPrincipal: 10}, nil)
	size := NewPool(Limit{Name: "subscription_bytes", PerPrincipal: 100}, nil)
	h, err := TakeAll("a", Units{count, 4}, Units{size, 60})
	if err != nil {
		t.Fatal(err)
	}
	var e *Exceeded
	if _, err := TakeAll("a", Units{count, 4}, Units{size, 60}); !errors.As(err, &e) || e.Name != "subscription_bytes" {
		t.Fatalf("second take = %v, want the bytes refused", err)
	}
	if count.Held("a") != 4 || size.Held("a") != 60 {
		t.Fatalf("a refused TakeAll kept %d and %d, want only the first holding's 4 and 60", count.Held("a"), size.Held("a"))
	}
	h.Release()
	h.Release()
	(*Holding)(nil).Release()
	if count.Total() != 0 || size.Total() != 0 {
		t.Fatalf("after Release: %d and %d held, want none", count.Total(), size.Total())
	}
}
