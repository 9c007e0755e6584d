package s3

import (
	"runtime"
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
