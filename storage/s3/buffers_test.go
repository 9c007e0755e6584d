package s3

import (
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestWarmUploadsReuseParts: once a Store has uploaded an object of
// several parts, the next uploads take their part buffers from its free
// list, even after collections (which empty a sync.Pool), and the Store
// keeps no more than maxIdleParts between uploads.
func TestWarmUploadsReuseParts(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	data := storagetest.Bytes(3, 0, 3*testPartSize+1)
	upload := func() {
		t.Helper()
		if _, err := writeAll(t.Context(), s, "warm.bin", data, storage.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	upload()
	const uploads = 3
	var allocated uint64
	for range uploads {
		runtime.GC()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		upload()
		runtime.ReadMemStats(&after)
		allocated += after.TotalAlloc - before.TotalAlloc
	}
	perUpload := allocated / uploads
	t.Logf("a warm upload of %d parts allocated %.2f MiB (part size %d MiB)", 4, float64(perUpload)/(1<<20), testPartSize>>20)
	if perUpload >= testPartSize {
		t.Errorf("a warm upload allocated %d bytes, a part or more: part buffers are not reused", perUpload)
	}
	if n := s.parts.idle(); n == 0 || n > maxIdleParts {
		t.Errorf("the Store keeps %d part buffers after the uploads, want 1 to %d", n, maxIdleParts)
	}
}

func TestPartSizeFor(t *testing.T) {
	const mib = 1 << 20
	s := &Store{partSize: 8 * mib, partsPerStep: partsPerStep}
	cases := []struct {
		n    int
		size int64
		want int
	}{
		{1, 0, 8 * mib},
		{2000, 0, 8 * mib},
		{2001, 0, 16 * mib},
		{4001, 0, 32 * mib},
		{9999, 0, 128 * mib},
		{1, 1 << 30, 8 * mib},
		{1, 10000 * 8 * mib, 8 * mib},
		{7, 10000*8*mib + 1, 9 * mib},
		{1, 5 << 40, 525 * mib},
	}
	for _, c := range cases {
		if got := s.partSizeFor(c.n, c.size); got != c.want {
			t.Errorf("partSizeFor(%d, %d) = %d MiB, want %d MiB", c.n, c.size, got/mib, c.want/mib)
		}
	}
	var total int64
	for n := 1; n <= maxParts; n++ {
		total += int64(s.partSizeFor(n, 0))
	}
	if total < 480<<30 {
		t.Errorf("10,000 parts of unknown size hold %d GiB, want at least 480", total>>30)
	}
}

// TestGrowingParts: an upload of unknown size doubles its part size every
// Store.partsPerStep parts (lowered here to 2), and the object comes out
// whole.
func TestGrowingParts(t *testing.T) {
	var mu sync.Mutex
	var sizes []int64
	rt := &hookTransport{before: func(r *http.Request) error {
		if isPart(r) {
			mu.Lock()
			sizes = append(sizes, r.ContentLength)
			mu.Unlock()
		}
		return nil
	}}
	s := newStore(t, Options{PartSize: testPartSize, Transport: rt})
	s.partsPerStep = 2
	data := storagetest.Bytes(5, 0, 2*testPartSize+2*2*testPartSize+100)
	info, err := writeAll(t.Context(), s, "grown.bin", data, storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(sizes)
	want := []int64{100, testPartSize, testPartSize, 2 * testPartSize, 2 * testPartSize}
	if !slices.Equal(sizes, want) {
		t.Errorf("part sizes %v, want %v", sizes, want)
	}
	if info.SHA256 != hexSum(data) || info.Size != int64(len(data)) {
		t.Errorf("Commit = %d bytes, SHA-256 %s; want %d, %s", info.Size, info.SHA256, len(data), hexSum(data))
	}
	if n := s.parts.idle(); n > maxIdleParts {
		t.Errorf("the Store keeps %d part buffers, want at most %d", n, maxIdleParts)
	}
}
