//go:build unix

package localfs

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage/internal/cursor"
)

// BenchmarkListPage lists pages of 100 from the folder "f/" holding n
// objects, each iteration from a cursor far from the last one, so that the
// big folder is read all over and not only from its start.
func BenchmarkListPage(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if err := seed(dir, "f/", n); err != nil {
				b.Fatal(err)
			}
			s, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// The first page after Open reads the folder into the index:
			// reported on its own, outside the per-page figure.
			start, startCPU := time.Now(), processCPU()
			if _, err := s.List(b.Context(), "f/", "", 100); err != nil {
				b.Fatal(err)
			}
			firstPage, firstPageCPU := time.Since(start), processCPU()-startCPU
			cpu := processCPU()
			for i := 0; b.Loop(); i++ {
				cur := ""
				if at := i * 7919 % n; at < n-100 {
					cur = cursor.Encode(fmt.Sprintf("f/k%07d", at))
				}
				page, err := s.List(b.Context(), "f/", cur, 100)
				if err != nil || len(page.Items) != 100 {
					b.Fatalf("List: %d items, %v", len(page.Items), err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(firstPage.Microseconds())/1000, "first-page-ms")
			b.ReportMetric(float64(firstPageCPU)/1e6, "first-page-cpu-ms")
		})
	}
}

// processCPU returns the user and system CPU time this process has used, in
// nanoseconds: a figure less disturbed than wall time by other work on the
// machine.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
