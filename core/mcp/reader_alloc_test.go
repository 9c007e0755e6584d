//go:build !race

package mcp

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
	s, err := NewServer(Options{Backend: nopBackend{}, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"blob:///bench/small-4KiB.bin","_meta":{"progressToken":"p"}}}`)
	read := func() {
		out, files, err := s.readMessage(bytes.NewReader(body), nil, nil)
		if err != nil || len(out) == 0 {
			t.Fatalf("readMessage: %v", err)
		}
		files.release()
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
