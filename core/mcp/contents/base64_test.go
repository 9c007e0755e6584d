package contents

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/iotest"
	"time"
)

// randomFile writes n random bytes after skip filler bytes to a new file
// and returns it opened, positioned at the random bytes, and those bytes.
func randomFile(t testing.TB, skip, n int) (*os.File, []byte) {
	t.Helper()
	all := make([]byte, skip+n)
	_, _ = rand.NewChaCha8([32]byte{byte(skip), byte(n), byte(n >> 8), byte(n >> 16)}).Read(all)
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, all, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Seek(int64(skip), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	return f, all[skip:]
}

// aheadBudget lets every stream encode ahead, whatever the cores: the
// tests' way to run encodeAhead (the process budget allows it from four
// cores).
func aheadBudget() *budget { return &budget{limit: MemoryBudget, aheadMax: 1 << 20} }

// writers are the two ways to stream: the process budget (inline on two
// cores) and one that encodes every large body ahead.
var writers = map[string]func(io.Writer, io.Reader, int64) error{
	"process": writeBase64,
	"ahead":   aheadBudget().write,
}

// wrapped hides a reader behind Unwrap, as telemetry and cancel wrappers do.
type wrapped struct{ io.ReadCloser }

func (w wrapped) Unwrap() io.ReadCloser { return w.ReadCloser }

// TestWriteBase64Sources: every source (a plain reader, a file read with
// pread, a file encoded from mapped windows, inline and ahead) writes
// exactly the standard encoding, across chunk and window boundaries and
// from unaligned file offsets.
func TestWriteBase64Sources(t *testing.T) {
	t.Parallel()
	sizes := []int{0, 1, 2, 3, 4, 3<<10 - 1, 3 << 10, 3<<10 + 1, maxOut/4*3 - 1, maxOut/4*3 + 1,
		minWindow - 1, minWindow, minWindow + 1, mapMinBody - 1, mapMinBody, maxWindow + 5, largeBody - 1, largeBody + 2*maxWindow + 7}
	for _, n := range sizes {
		for _, skip := range []int{0, 4097} {
			if skip == 0 && n > maxWindow {
				continue // large bodies once, from an unaligned offset
			}
			f, want := randomFile(t, skip, n)
			wantB64 := base64.StdEncoding.EncodeToString(want)
			for name, r := range map[string]func() io.Reader{
				"reader":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(want)) },
				"file":    func() io.Reader { return f },
				"wrapped": func() io.Reader { return wrapped{f} },
			} {
				for wname, write := range writers {
					if _, err := f.Seek(int64(skip), io.SeekStart); err != nil {
						t.Fatal(err)
					}
					var out bytes.Buffer
					if err := write(&out, r(), int64(n)); err != nil {
						t.Fatalf("n=%d skip=%d %s %s: %v", n, skip, name, wname, err)
					}
					if out.String() != wantB64 {
						t.Fatalf("n=%d skip=%d %s %s: base64 differs (%d bytes, want %d)", n, skip, name, wname, out.Len(), len(wantB64))
					}
				}
			}
		}
	}
}

// TestWriteBase64Short: a reader or file that ends before n fails with
// ErrShortBody, whichever source serves it.
func TestWriteBase64Short(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, mapMinBody + 10, largeBody + 10} {
		f, data := randomFile(t, 0, n)
		for wname, write := range writers {
			for name, r := range map[string]io.Reader{"reader": bytes.NewReader(data), "file": f} {
				if _, err := r.(io.Seeker).Seek(0, io.SeekStart); err != nil {
					t.Fatal(err)
				}
				if err := write(io.Discard, r, int64(n)+1); !errors.Is(err, ErrShortBody) {
					t.Errorf("n=%d %s %s: %v, want ErrShortBody", n, name, wname, err)
				}
			}
		}
	}
}

// truncating truncates its file on the first write: the file shrinks
// under the mapping the encoder reads.
type truncating struct {
	f    *os.File
	done bool
}

func (w *truncating) Write(p []byte) (int, error) {
	if !w.done {
		w.done = true
		if err := w.f.Truncate(0); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// TestWriteBase64FileShrinks: a file cut short while it is encoded from a
// mapping faults; the fault becomes ErrFileChanged, not a crash, inline and
// ahead.
func TestWriteBase64FileShrinks(t *testing.T) {
	t.Parallel()
	if !mapSupported {
		t.Skip("files are not mapped on this platform")
	}
	for wname, write := range writers {
		for _, n := range []int{2 * maxWindow, largeBody + 2*maxWindow} {
			f, _ := randomFile(t, 0, n)
			w, err := os.OpenFile(f.Name(), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = write(&truncating{f: w}, f, int64(n))
			w.Close()
			if !errors.Is(err, ErrFileChanged) {
				t.Errorf("n=%d %s: %v, want ErrFileChanged", n, wname, err)
			}
		}
	}
}

// failAfter fails every write after the first n.
type failAfter struct{ n int }

var errWrite = errors.New("write failed")

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errWrite
	}
	w.n--
	return len(p), nil
}

// TestEncodeAheadStopsOnWriteError: when a write fails the encoder
// goroutine stops and the writer's error comes back.
func TestEncodeAheadStopsOnWriteError(t *testing.T) {
	t.Parallel()
	n := largeBody + 4*maxWindow
	f, _ := randomFile(t, 0, n)
	before := runtime.NumGoroutine()
	for _, after := range []int{0, 1, 3} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if err := aheadBudget().write(&failAfter{n: after}, f, int64(n)); !errors.Is(err, errWrite) {
			t.Fatalf("after %d writes: %v, want errWrite", after, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after the streams ended, %d before", g, before)
	}
}

// TestPlanWithinShare: every plan fits its share (or the smallest plan),
// writes whole base64 quanta and maps whole chunks.
func TestPlanWithinShare(t *testing.T) {
	t.Parallel()
	floor := plan{out: minOut, raw: minOut / 4 * 3, depth: 1}.memory()
	for share := int64(minShare); share <= maxShare; share += share/7 + 1 {
		for _, left := range []int64{1, 100 << 10, 1 << 30} {
			for _, mappable := range []bool{false, true} {
				for _, ahead := range []bool{false, true} {
					p := planFor(share, left, mappable, ahead)
					limit := max(share, int64(floor))
					if ahead {
						limit = max(share, int64(2*minOut+minOut/4*3))
					}
					if int64(p.memory()) > limit {
						t.Fatalf("share %d left %d: plan %+v holds %d", share, left, p, p.memory())
					}
					if p.out&(p.out-1) != 0 || p.raw != p.out/4*3 || p.raw%3 != 0 {
						t.Fatalf("plan %+v: bad chunk sizes", p)
					}
					if p.window != 0 && (p.window%p.raw != 0 || p.window < minWindow || !mappable) {
						t.Fatalf("plan %+v: bad window", p)
					}
				}
			}
		}
	}
	if p := planFor(maxShare, 1<<30, true, true); p.window != maxWindow || p.out != maxOut {
		t.Errorf("a lone stream's plan is %+v, want the largest window and buffers", p)
	}
}
