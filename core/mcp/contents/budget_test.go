package contents

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// stalled is a writer whose writes block until the gate closes, then fail:
// a client that stopped reading.
type stalled struct {
	gate    <-chan struct{}
	waiting *atomic.Int64
}

func (w stalled) Write([]byte) (int, error) {
	w.waiting.Add(1)
	<-w.gate
	return 0, errWrite
}

func heapInuse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// TestStreamsStayWithinBudget starts 4,096 base64 streams of 4 MiB each
// whose writers stall on their first write, the worst case: each holds a
// buffer it cannot give back. The plans reserved, and the heap they grow,
// stay within MemoryBudget plus the smallest plan per stream, not the
// streams times a fixed chunk (4,096 × 448 KiB = 1.75 GiB before the
// budget). The test is not parallel, so the heap is its own.
func TestStreamsStayWithinBudget(t *testing.T) {
	const streamsN, size = 4096, 4 << 20
	floor := int64(plan{out: minOut, raw: minOut / 4 * 3, depth: 1}.memory())
	bound := MemoryBudget + streamsN*floor
	base := heapInuse()
	gate := make(chan struct{})
	var waiting atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, streamsN)
	for range streamsN {
		wg.Go(func() { errs <- writeBase64(stalled{gate, &waiting}, zeros{}, size) })
	}
	deadline := time.Now().Add(time.Minute)
	for waiting.Load() < streamsN && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := waiting.Load(); n < streamsN {
		close(gate)
		t.Fatalf("only %d of %d streams reached their first write", n, streamsN)
	}
	used := streams.used.Load()
	growth := heapInuse() - base
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, errWrite) {
			t.Fatalf("stream ended with %v, want errWrite", err)
		}
	}
	t.Logf("%d stalled streams: %.1f MiB reserved, heap grew %.1f MiB (bound %.1f MiB)",
		streamsN, float64(used)/(1<<20), float64(growth)/(1<<20), float64(bound)/(1<<20))
	if used > bound {
		t.Errorf("plans reserve %d bytes, over the bound %d", used, bound)
	}
	// The heap also holds each goroutine's small state and the pools' spare
	// buffers (at most what was reserved): allow 1 KiB per stream and 8 MiB.
	if limit := bound + streamsN<<10 + 8<<20; growth > limit {
		t.Errorf("heap grew %d bytes with %d stalled streams, over %d", growth, streamsN, limit)
	}
	if u, a := streams.used.Load(), streams.active.Load(); u != 0 || a != 0 {
		t.Errorf("after the streams: %d bytes reserved, %d streams active; want 0, 0", u, a)
	}
}

// TestReserveWhenSpent: once the budget is spent, reserve grants only the
// smallest plan, even for the last few bytes of a mapped file, whose
// buffers are already minOut but whose share would still allow a window.
func TestReserveWhenSpent(t *testing.T) {
	t.Parallel()
	floor := plan{out: minOut, raw: minOut / 4 * 3, depth: 1}.memory()
	b := &budget{limit: MemoryBudget, aheadMax: 1}
	b.active.Store(1)
	b.used.Store(MemoryBudget)
	for _, left := range []int64{1, 1000, minOut / 4 * 3, 1 << 20, 1 << 30} {
		for _, ahead := range []bool{false, true} {
			p := b.reserve(left, true, ahead)
			if p.window != 0 || p.out != minOut {
				t.Errorf("left %d ahead %v: spent budget granted %+v (%d bytes), want the smallest plan", left, ahead, p, p.memory())
			}
			if !ahead && p.memory() != floor {
				t.Errorf("left %d: smallest plan holds %d bytes, want %d", left, p.memory(), floor)
			}
			b.release(p)
		}
	}
	if u := b.used.Load(); u != MemoryBudget {
		t.Errorf("after releasing every plan: %d bytes reserved, want %d", u, MemoryBudget)
	}
}
