//go:build !race

package s3

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// benchSize is the object size of the throughput benchmarks (target P9 of
// docs/design.md moves 1 GiB).
const benchSize = 1 << 30

// BenchmarkThroughput compares, on the shared SeaweedFS node, the Store's
// Writer with minio-go's own PutObject of the same bytes (from memory, as
// bench/compare's P9 gives them), and the Store's Open with a plain
// net/http GET of a presigned URL. Run it with
//
//	go test -run '^$' -bench Throughput -benchtime 1x -count 3 ./storage/s3
//
// Besides MB/s it reports the CPU time per operation (user + system) of
// this process (cpu-s/op) and of the S3 service (server-cpu-s/op), which
// the other processes on a busy machine disturb less than the wall clock.
func BenchmarkThroughput(b *testing.B) {
	s := newStore(b, Options{})
	ctx := b.Context()
	data := storagetest.Bytes(1, 0, benchSize)
	run := func(name string, op func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchSize)
			cpu, server := processCPU(), serverCPU()
			for b.Loop() {
				op(b)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e9, "cpu-s/op")
			b.ReportMetric(float64(serverCPU()-server)/float64(b.N)/1e9, "server-cpu-s/op")
		})
	}
	run("write/store", func(b *testing.B) { writeStore(b, s, "store.bin", data) })
	for _, v := range writerVariants {
		vs := newStore(b, Options{Bucket: s.bucket, PartSize: v.opts.PartSize, SignPayloads: v.opts.SignPayloads, StagedCommit: v.opts.StagedCommit})
		if v.inFlight > 0 {
			vs.inFlight = v.inFlight
		}
		run("write/store-"+v.name, func(b *testing.B) { writeStore(b, vs, v.name+".bin", data) })
	}
	run("write/minio-go", func(b *testing.B) {
		_, err := s.client.PutObject(ctx, s.bucket, "minio-go.bin", bytes.NewReader(data), benchSize, minio.PutObjectOptions{})
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

// writerVariants are the Writer's other shapes BenchmarkThroughput times.
var writerVariants = []struct {
	name     string
	opts     Options
	inFlight int
}{
	{name: "signed", opts: Options{SignPayloads: true}},
	{name: "16MiB", opts: Options{PartSize: 16 << 20}},
	{name: "1inflight", inFlight: 1},
	{name: "3inflight", inFlight: 3},
	{name: "staged", opts: Options{StagedCommit: true}},
}

// writeStore writes data to key through the Store in 1 MiB writes.
func writeStore(b *testing.B, s *Store, key string, data []byte) {
	w, err := s.Create(b.Context(), key, storage.CreateOptions{MediaType: "application/octet-stream"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort(b.Context())
	if _, err := io.CopyBuffer(w, struct{ io.Reader }{bytes.NewReader(data)}, make([]byte, 1<<20)); err != nil {
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

// serverCPU returns the user + system CPU time of the SeaweedFS nodes this
// process started (s3test's), from /proc; 0 where there is no /proc.
func serverCPU() time.Duration {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	var ticks int64
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime stime: fields 14 and 15.
		comm, rest, ok := strings.Cut(string(stat), ") ")
		fields := strings.Fields(rest)
		if !ok || !strings.HasSuffix(comm, "(weed") || len(fields) < 13 || fields[1] != self {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		ticks += utime + stime
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}
