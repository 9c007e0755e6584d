//go:build !race

package s3

import (
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// benchSize is the object size of the throughput benchmarks (issue 15's
// P9 moves 1 GiB).
const benchSize = 1 << 30

// BenchmarkThroughput compares, on the shared MinIO server, the Store's
// Writer with minio-go's own PutObject of the same bytes, and the Store's
// Open with a plain net/http GET of a presigned URL. Run it with
//
//	go test -run '^$' -bench Throughput -benchtime 1x -count 3 ./storage/s3
//
// Besides MB/s it reports this process's CPU time per operation (user +
// system), which the other processes on a busy machine disturb less than
// the wall clock.
func BenchmarkThroughput(b *testing.B) {
	s := newStore(b, Options{})
	staged := newStore(b, Options{Bucket: s.bucket, StagedCommit: true})
	ctx := b.Context()
	run := func(name string, op func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchSize)
			cpu := processCPU()
			for b.Loop() {
				op(b)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e9, "cpu-s/op")
		})
	}
	run("write/store", func(b *testing.B) { writeStore(b, s, "store.bin") })
	run("write/store-staged", func(b *testing.B) { writeStore(b, staged, "staged.bin") })
	run("write/minio-go", func(b *testing.B) {
		_, err := s.client.PutObject(ctx, s.bucket, "minio-go.bin", storagetest.NewStream(1, benchSize), benchSize, minio.PutObjectOptions{})
		if err != nil {
			b.Fatal(err)
		}
	})
	run("read/store", func(b *testing.B) {
		rc, _, err := s.Open(ctx, "store.bin", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer rc.Close()
		drain(b, rc)
	})
	run("read/presigned", func(b *testing.B) {
		u, err := s.PresignGet(ctx, "store.bin", time.Hour, storage.PresignOptions{})
		if err != nil {
			b.Fatal(err)
		}
		resp, err := http.Get(u.String())
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		drain(b, resp.Body)
	})
}

func writeStore(b *testing.B, s *Store, key string) {
	w, err := s.Create(b.Context(), key, storage.CreateOptions{MediaType: "application/octet-stream"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort(b.Context())
	if _, err := io.CopyBuffer(w, storagetest.NewStream(1, benchSize), make([]byte, 1<<20)); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Commit(b.Context()); err != nil {
		b.Fatal(err)
	}
}

// drain reads r to the end in 256 KiB reads, as the server's byte plane
// copies a body to its client, and checks the length.
func drain(b *testing.B, r io.Reader) {
	n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{r}, make([]byte, 256<<10))
	if err != nil || n != benchSize {
		b.Fatalf("read %d bytes: %v", n, err)
	}
}

// processCPU returns the user + system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
