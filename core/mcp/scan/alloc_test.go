//go:build !race

package scan

import (
	"bytes"
	"runtime"
	"testing"
)

// TestReadMessageSmallAllocBytes keeps small requests cheap: scanning a
// 200-byte resources/read must not allocate anything like the 256 KiB scan
// buffer per message (it is pooled), or small-request throughput becomes
// garbage-collection bound.
func TestReadMessageSmallAllocBytes(t *testing.T) {
	opts := Options{MaxBodyBytes: 4 << 20, MaxFileBytes: 1 << 30, SpoolDir: t.TempDir()}
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"blob:///bench/small-4KiB.bin","_meta":{"progressToken":"p"}}}`)
	read := func() {
		m, err := Read(bytes.NewReader(body), opts, nil)
		if err != nil || len(m.Raw) == 0 {
			t.Fatalf("Read: %v", err)
		}
		m.Files.Release()
	}
	read() // warm the pool
	const n = 1000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		read()
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per small message", perCall)
	if perCall > 16<<10 {
		t.Fatalf("scanning a small message allocates %d bytes, want < 16 KiB", perCall)
	}
}

// TestReadMessageSmallAllocs bounds the allocations of scanning a small
// resources/read: the rebuilt bytes in one allocation, member spans and
// the method without any (a busy endpoint scans one per request).
func TestReadMessageSmallAllocs(t *testing.T) {
	opts := Options{MaxBodyBytes: 4 << 20, MaxFileBytes: 1 << 30}
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"blob:///bench/4k.bin"}}`)
	allocs := testing.AllocsPerRun(1000, func() {
		m, err := Read(bytes.NewReader(body), opts, nil)
		if err != nil || m.Method != "resources/read" || len(m.Params) != 1 {
			t.Fatalf("Read: %v, %+v", err, m)
		}
		m.Files.Release()
	})
	t.Logf("%.0f allocations per small message", allocs)
	if allocs > maxSmallAllocs {
		t.Errorf("scanning a small resources/read allocates %.0f times, want at most %d", allocs, maxSmallAllocs)
	}
}

// maxSmallAllocs: the reader, the message, its Files (the scanner is
// pooled), the rebuilt bytes, the id's copy, and the members of the message
// and of params (a map of two allocations each).
const maxSmallAllocs = 10
