package storagetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// RunLarge streams Suite.LargeSize bytes of unknown size through a fresh
// backend, measuring the heap while it uploads, then reads the object back
// whole and in part. The caller skips it in -short mode, not this library:
// make test-full reruns at full size every package whose test binary links a
// file that looks at the short flag, and storagetest doing so would send every
// package that uses the suite there, to run again unchanged.
func (s Suite) RunLarge(t *testing.T) {
	size := s.LargeSize
	if size <= 0 {
		size = 1 << 30
	}
	limit := s.MaxHeapGrowth
	if limit == 0 {
		limit = 64 << 20
	}
	b := s.backend(t)
	ctx := t.Context()
	const key = "large/stream.bin"
	const seed = 42

	src := NewStream(seed, size)
	buf := make([]byte, 1<<20)
	want := sha256.New()
	began := time.Now()
	w, err := b.Create(ctx, key, storage.CreateOptions{MediaType: "application/x-test", Filename: "stream.bin"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort(ctx)

	heap := StartHeapMonitor()
	start := time.Now()
	n, err := io.CopyBuffer(io.MultiWriter(w, want), src, buf)
	if err != nil {
		t.Fatalf("upload after %d bytes: %v", n, err)
	}
	info, err := w.Commit(ctx)
	elapsed := time.Since(start)
	growth := heap.Stop()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	noteWrite(info, began)
	t.Logf("uploaded %d MiB in %v (%.0f MB/s); peak heap growth %.1f MiB (limit %d MiB)",
		size>>20, elapsed.Round(time.Millisecond), float64(size)/elapsed.Seconds()/1e6, float64(growth)/(1<<20), limit>>20)
	if growth > limit {
		t.Errorf("heap grew by %d MiB during the upload, limit %d MiB", growth>>20, limit>>20)
	}
	if info.Size != size || info.SHA256 != hex.EncodeToString(want.Sum(nil)) {
		t.Fatalf("Commit Info = size %d sha256 %s, want %d %x", info.Size, info.SHA256, size, want.Sum(nil))
	}
	sameInfo(t, "Stat", mustStat(t, b, key), info)

	// Read it all back.
	rc, _, err := b.Open(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	start = time.Now()
	n, err = io.CopyBuffer(got, rc, buf)
	rc.Close()
	if err != nil || n != size {
		t.Fatalf("read back %d of %d bytes: %v", n, size, err)
	}
	t.Logf("read back in %v", time.Since(start).Round(time.Millisecond))
	if h := hex.EncodeToString(got.Sum(nil)); h != info.SHA256 {
		t.Fatalf("read back sha256 %s, want %s", h, info.SHA256)
	}

	// A range across the last block boundary, clipped at the end.
	off := size - blockSize - 1000
	tail, _, err := s.read(t, b, key, &storage.Range{Offset: off, Length: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tail, Bytes(seed, off, size-off)) {
		t.Errorf("range at %d: wrong bytes", off)
	}
	if err := b.Delete(ctx, key); err != nil {
		t.Errorf("Delete: %v", err)
	}
}

// HeapMonitor samples the bytes of heap objects (live and not yet swept)
// every millisecond, to find the peak growth over a baseline.
type HeapMonitor struct{ p *Peak }

const heapMetric = "/memory/classes/heap/objects:bytes"

// StartHeapMonitor collects garbage, takes the baseline and starts sampling
// every millisecond.
func StartHeapMonitor() *HeapMonitor {
	return &HeapMonitor{WatchPeak(time.Millisecond, func() int64 { return int64(heapObjects()) })}
}

// Stop ends sampling, takes a last sample and returns the peak growth over
// the baseline.
func (m *HeapMonitor) Stop() uint64 {
	m.p.observe()
	return uint64(m.p.Stop())
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
