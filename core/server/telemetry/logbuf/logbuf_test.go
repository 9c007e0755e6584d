package logbuf

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder counts the writes it receives.
type recorder struct {
	mu     sync.Mutex
	writes int
	data   bytes.Buffer
	fail   bool
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes++
	if r.fail {
		return 0, errors.New("disk gone")
	}
	return r.data.Write(p)
}

func (r *recorder) snapshot() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes, r.data.String()
}

func TestLinesAreBatchedUntilFlush(t *testing.T) {
	rec := &recorder{}
	w := New(rec, 1<<10, time.Hour)
	for i := range 10 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if n, _ := rec.snapshot(); n != 0 {
		t.Fatalf("%d writes before Flush, want 0", n)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	n, got := rec.snapshot()
	if n != 1 || strings.Count(got, "\n") != 10 || !strings.HasPrefix(got, "line 0\nline 1\n") {
		t.Fatalf("after Flush: %d writes of %q, want 1 write of the 10 lines in order", n, got)
	}
}

func TestFullBufferIsWrittenWithWholeLines(t *testing.T) {
	rec := &recorder{}
	w := New(rec, 64, time.Hour)
	line := strings.Repeat("x", 19) + "\n" // 20 bytes: three fit in 64
	for range 7 {
		w.Write([]byte(line))
	}
	w.Flush()
	n, got := rec.snapshot()
	if got != strings.Repeat(line, 7) {
		t.Fatalf("lost or reordered bytes: %q", got)
	}
	if n != 3 { // 3 + 3 lines on overflow, the last at Flush
		t.Fatalf("%d writes, want 3", n)
	}
}

func TestOversizedLinePassesStraightThrough(t *testing.T) {
	rec := &recorder{}
	w := New(rec, 16, time.Hour)
	w.Write([]byte("short\n"))
	big := strings.Repeat("y", 40) + "\n"
	w.Write([]byte(big))
	n, got := rec.snapshot()
	if n != 2 || got != "short\n"+big {
		t.Fatalf("%d writes of %q, want the buffered line then the big one", n, got)
	}
	if cap(w.buf) > 16 {
		t.Fatalf("buffer grew to %d bytes for an oversized line, limit 16", cap(w.buf))
	}
}

func TestTimerWritesAfterTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		w := New(rec, 1<<10, 50*time.Millisecond)
		w.Write([]byte("a\n"))
		time.Sleep(40 * time.Millisecond)
		synctest.Wait()
		if n, _ := rec.snapshot(); n != 0 {
			t.Fatalf("written after 40 ms of a 50 ms interval")
		}
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		if n, got := rec.snapshot(); n != 1 || got != "a\n" {
			t.Fatalf("after the interval: %d writes of %q", n, got)
		}
		w.Write([]byte("b\n")) // the timer is armed again
		time.Sleep(60 * time.Millisecond)
		synctest.Wait()
		if n, got := rec.snapshot(); n != 2 || got != "a\nb\n" {
			t.Fatalf("second interval: %d writes of %q", n, got)
		}
	})
}

func TestWarnRecordsAreWrittenAtOnce(t *testing.T) {
	rec := &recorder{}
	w := New(rec, 1<<10, time.Hour)
	log := slog.New(Handler(slog.NewTextHandler(w, nil), w)).With("node", "n1")
	log.Info("request", "status", 200)
	if n, _ := rec.snapshot(); n != 0 {
		t.Fatal("an info line was written at once")
	}
	log.Error("store failed")
	n, got := rec.snapshot()
	if n != 1 || !strings.Contains(got, "msg=request") || !strings.Contains(got, `msg="store failed"`) || !strings.Contains(got, "node=n1") {
		t.Fatalf("after an error: %d writes of %q, want the info and the error lines together", n, got)
	}
}

func TestFailingOutputKeepsMemoryBounded(t *testing.T) {
	rec := &recorder{fail: true}
	w := New(rec, 256, time.Hour)
	for i := range 10_000 {
		fmt.Fprintf(w, "line %d of a failing log\n", i)
	}
	if cap(w.buf) > 256 {
		t.Fatalf("buffer grew to %d bytes, limit 256", cap(w.buf))
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush hid the write error")
	}
}

func TestConcurrentWritersKeepLinesWhole(t *testing.T) {
	rec := &recorder{}
	w := New(rec, 100, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(w, "g%d-%04d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Flush()
	_, got := rec.snapshot()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 8*500 {
		t.Fatalf("%d lines, want %d", len(lines), 8*500)
	}
	for _, l := range lines {
		if len(l) != 7 || l[0] != 'g' {
			t.Fatalf("torn line %q", l)
		}
	}
}
