package server

import (
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestTusMemoryFlat: a tus upload of 256 MiB (64 MiB under -race or
// -short) in one streamed PATCH to the local store, then its completion
// through the ingest path, while sampling the heap: growth stays under
// 48 MiB (a PATCH holds one 8 MiB segment buffer, ingest three 1 MiB
// chunks), whatever the upload's size. The blob is byte-identical.
func TestTusMemoryFlat(t *testing.T) {
	size := int64(256 << 20)
	if raceEnabled || testing.Short() {
		size = 64 << 20
	}
	const maxGrowth = 48 << 20
	heapTest(t)
	c := newTusClient(t, newLocalStore(t))
	path := c.create(int(size), "tus/big.bin")
	h := sha256.New()
	src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{4, 5, 6}), size), h)
	req, err := http.NewRequest("PATCH", c.base+path, src)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Tus-Resumable", "1.0.0")
	req.Header.Set("Content-Type", "application/offset+octet-stream")
	req.Header.Set("Upload-Offset", "0")
	watch := heapWatch(t)
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	growth := watch()
	t.Logf("%d MiB in %v, heap growth %.1f MiB", size>>20, time.Since(start).Round(time.Millisecond), float64(growth)/(1<<20))
	if resp.StatusCode != 204 || resp.Header.Get("Upload-Offset") != strconv.FormatInt(size, 10) {
		t.Fatalf("PATCH: %d %v", resp.StatusCode, resp.Header)
	}
	if growth > maxGrowth {
		t.Fatalf("heap grew %d bytes, over %d", growth, maxGrowth)
	}
	r := c.do("GET", "/v1/blobs/tus/big.bin", nil, nil)
	got := sha256.New()
	io.Copy(got, r.Body)
	if string(got.Sum(nil)) != string(h.Sum(nil)) {
		t.Fatal("the blob's sha256 differs from the upload's")
	}
}
