package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/contents"
	"github.com/mcpblob/mcpblob/storage"
)

// TestConcurrentReadsMemoryBounded runs 256 resources/read streams of
// large blobs at once against a real server on loopback (docs/design.md, P8):
// half the clients read as fast as they can, half read 16 KiB and then
// stall until the fast ones are done, so their server streams sit blocked
// in write with whatever buffers they hold. Every stream must end with the
// right bytes, and the process's heap growth (server and clients) must stay
// within the encode budget plus per-connection state, 72 MiB in all, not
// the streams times a fixed chunk (256 × 448 KiB = 112 MiB of buffers
// before the budget: the heap grew 104–116 MiB); RSS growth within P8's
// 128 MiB. 64 streams of smaller blobs under -race or -short.
func TestConcurrentReadsMemoryBounded(t *testing.T) {
	clients, size := 256, int64(4<<20)
	if raceEnabled || testing.Short() {
		clients, size = 64, 1<<20
	}
	const blobs = 4
	heapTest(t)
	st, sums := seedBlobs(t, blobs, size)
	c := serveMCP(t, Options{Backend: st}, legacyVersion, `{}`)
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: clients, ResponseHeaderTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Minute}

	watch := startMemWatch()
	fastDone := make(chan struct{})
	var fast, all sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		slow := i%2 == 1
		if !slow {
			fast.Add(1)
		}
		all.Go(func() {
			key := fmt.Sprintf("p8/blob-%d", i%blobs)
			req := c.in(t).requestID(fmt.Sprint(i+1), "resources/read", `{"uri":"blob:///`+key+`"}`)
			var hold <-chan struct{}
			if slow {
				hold = fastDone
			} else {
				defer fast.Done()
			}
			errs <- readBlobChecked(hc, req.Request, size, sums[key], i%16 < 2, hold)
		})
	}
	fast.Wait()
	close(fastDone)
	all.Wait()
	heap, rss := watch.end()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			if failed <= 3 {
				t.Error(err)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d reads failed", failed, clients)
	}
	t.Logf("%d concurrent reads of %d MiB (half stalled): heap grew %.1f MiB, RSS %.1f MiB",
		clients, size>>20, mib(heap), mib(rss))
	// The budget, plus per connection: fasthttp's buffers and request state,
	// the client's transport and read buffers, for one client in eight a
	// decoder, and garbage not yet collected (under 160 KiB on average).
	if limit := int64(contents.MemoryBudget) + int64(clients)*(160<<10); heap > limit {
		t.Errorf("heap grew %.1f MiB, over %.1f MiB", mib(heap), mib(limit))
	}
	if !raceEnabled && rss > 128<<20 {
		t.Errorf("RSS grew %.1f MiB, over P8's 128 MiB", mib(rss))
	}
}

// seedBlobs stores n random blobs of size bytes (keys p8/blob-0…) in a
// local store and returns it with their sha256 by key.
func seedBlobs(t *testing.T, n int, size int64) (storage.Backend, map[string][sha256.Size]byte) {
	t.Helper()
	ctx := context.Background()
	st := newLocalStore(t)
	sums := make(map[string][sha256.Size]byte, n)
	for i := range n {
		key := fmt.Sprintf("p8/blob-%d", i)
		w, err := st.Create(ctx, key, storage.CreateOptions{MediaType: "application/octet-stream", Size: size})
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.CopyN(io.MultiWriter(w, h), rand.NewChaCha8([32]byte{byte(i)}), size); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		sums[key] = [sha256.Size]byte(h.Sum(nil))
	}
	return st, sums
}

// readBlobChecked runs req (a resources/read of a size-byte blob) and
// reads the answer with a small buffer, checking its length; with check it
// also decodes the blob as it arrives and compares its sha256 (the decoder
// holds ~100 KiB, so only some clients do, to keep the heap the server's).
// With hold set it reads 16 KiB, then waits for hold to close before
// reading the rest.
func readBlobChecked(hc *http.Client, req *http.Request, size int64, want [sha256.Size]byte, check bool, hold <-chan struct{}) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if min := (size + 2) / 3 * 4; resp.ContentLength < min {
		return fmt.Errorf("Content-Length %d for a %d-byte blob", resp.ContentLength, size)
	}
	body := io.Reader(resp.Body)
	if hold != nil {
		head := make([]byte, 16<<10)
		if _, err := io.ReadFull(resp.Body, head); err != nil {
			return err
		}
		<-hold
		body = io.MultiReader(bytes.NewReader(head), resp.Body)
	}
	if !check {
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{body}, make([]byte, 8<<10))
		if err == nil && n != resp.ContentLength {
			err = fmt.Errorf("%d bytes, Content-Length %d", n, resp.ContentLength)
		}
		return err
	}
	sum, _, err := decodeBlobStream(body)
	if err != nil {
		return err
	}
	if [sha256.Size]byte(sum) != want {
		return fmt.Errorf("blob of %d bytes differs", size)
	}
	return nil
}
