package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// recorder records the writes it gets, failing once more than failAfter
// bytes arrived (when failAfter > 0).
type recorder struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	writes    []int
	failAfter int
}

var errDisk = errors.New("disk on fire")

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failAfter > 0 && r.buf.Len()+len(p) > r.failAfter {
		return 0, errDisk
	}
	r.writes = append(r.writes, len(p))
	return r.buf.Write(p)
}

func TestAsyncWriter(t *testing.T) {
	data := storagetest.Bytes(5, 0, 5<<20+3)
	for _, path := range []string{"Write", "ReadFrom"} {
		t.Run(path, func(t *testing.T) {
			var rec recorder
			a := NewAsyncWriter(&rec)
			var err error
			if path == "Write" {
				err = pieces(a, data)
			} else {
				var n int64
				n, err = a.ReadFrom(onlyReader{bytes.NewReader(data)})
				if n != int64(len(data)) {
					t.Fatalf("ReadFrom read %d bytes", n)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.buf.Bytes(), data) {
				t.Fatal("bytes differ")
			}
			// The small first chunk, whole chunks, then the rest.
			for i, n := range rec.writes {
				if i == 0 && n != FirstChunkSize || i > 0 && n != ChunkSize && i != len(rec.writes)-1 {
					t.Fatalf("writes %v: not in chunks", rec.writes)
				}
			}
			if _, err := a.Write([]byte("x")); err == nil {
				t.Fatal("Write after Close succeeded")
			}
		})
	}

	t.Run("small", func(t *testing.T) {
		var rec recorder
		a := NewAsyncWriter(&rec)
		a.Write([]byte("abc"))
		a.Write([]byte("def"))
		if err := a.Close(); err != nil || rec.buf.String() != "abcdef" || len(rec.writes) != 1 || a.work != nil {
			t.Fatalf("%v %q %v", err, rec.buf.String(), rec.writes)
		}
	})

	t.Run("error is sticky", func(t *testing.T) {
		rec := recorder{failAfter: FirstChunkSize + 2<<20}
		a := NewAsyncWriter(&rec)
		var err error
		for i := 0; i < 64 && err == nil; i++ { // 64 MiB: the failure must surface long before
			_, err = a.Write(data[:1<<20])
		}
		if !errors.Is(err, errDisk) {
			t.Fatalf("Write: %v", err)
		}
		if err := a.Close(); !errors.Is(err, errDisk) {
			t.Fatalf("Close: %v", err)
		}
		if rec.buf.Len() != rec.failAfter {
			t.Fatalf("%d bytes written after the failure", rec.buf.Len()-rec.failAfter)
		}
	})
}

// TestStoreHeap stores 256 MiB into the local store, through both copy
// paths, and checks that the heap grows by less than 16 MiB: nothing is
// buffered beyond the fixed chunks. 64 MiB under -race (about 10× slower,
// and the bound is the same).
func TestStoreHeap(t *testing.T) {
	size := int64(256 << 20)
	if raceEnabled {
		size = 64 << 20
	}
	be, _ := backends()[0].new(t)
	for _, path := range []string{"ReadFrom", "Write"} {
		t.Run(path, func(t *testing.T) {
			src := io.Reader(storagetest.NewStream(11, size))
			if path == "ReadFrom" {
				src = onlyReader{src}
			} else {
				src = writerTo{src}
			}
			want := storagetest.NewStream(11, size)
			done := storagetest.WatchPeak(10*time.Millisecond, storagetest.HeapInuse).Stop
			info, err := Store(t.Context(), be, Spec{Key: "big-" + path, MaxSize: size}, src)
			growth := done()
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != size || info.SHA256 != streamSum(t, want) {
				t.Fatalf("Info %+v", info)
			}
			t.Logf("%s: heap growth %.1f MiB", path, float64(growth)/(1<<20))
			if growth >= 16<<20 {
				t.Fatalf("heap grew by %.1f MiB storing %d MiB", float64(growth)/(1<<20), size>>20)
			}
		})
	}
}

// writerTo makes io.Copy call Upload.Write, with 64 KiB writes.
type writerTo struct{ r io.Reader }

func (w writerTo) Read(p []byte) (int, error) { return w.r.Read(p) }

func (w writerTo) WriteTo(dst io.Writer) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{dst}, w.r, make([]byte, 64<<10))
}

func streamSum(t *testing.T, s io.Reader) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, s); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestAsyncWriterFirstChunk: an upload that has sent little holds one
// FirstChunkSize chunk, not ChunkSize bytes.
func TestAsyncWriterFirstChunk(t *testing.T) {
	var rec recorder
	a := NewAsyncWriter(&rec)
	for range 100 {
		a.Write([]byte("x"))
	}
	if a.nbufs != 1 || cap(*a.cur) != FirstChunkSize || a.work != nil {
		t.Fatalf("after 100 bytes: %d chunks, the current one of %d bytes", a.nbufs, cap(*a.cur))
	}
	if err := a.Close(); err != nil || rec.buf.Len() != 100 {
		t.Fatalf("Close: %v, %d bytes", err, rec.buf.Len())
	}
}
