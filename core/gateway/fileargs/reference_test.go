package fileargs

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// memStore keeps files in memory; a file's link is "kept:{name}:{type}:{sha256}".
type memStore struct {
	mu      sync.Mutex
	files   map[string][]byte
	aborted int
}

func (s *memStore) Keep(arg, mediaType string) (File, error) {
	return &memFile{s: s, id: mediaType}, nil
}

type memFile struct {
	s   *memStore
	id  string
	buf bytes.Buffer
}

func (f *memFile) Write(p []byte) (int, error) { return f.buf.Write(p) }
func (f *memFile) Commit(facts Facts) (string, error) {
	f.id = facts.Name + ":" + f.id
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.files == nil {
		f.s.files = map[string][]byte{}
	}
	f.s.files[f.id] = f.buf.Bytes()
	return fmt.Sprintf("kept:%s:%x", f.id, sha256.Sum256(f.buf.Bytes())), nil
}
func (f *memFile) Abort() { f.s.mu.Lock(); f.s.aborted++; f.s.mu.Unlock() }

// rewriteAll rewrites msg fed in chunks of size: the bytes to forward, the
// error (a refusal).
func rewriteAll(msg []byte, size int, store Store) ([]byte, error) {
	out, _, err := rewriteOpen(msg, size, store)
	return out, err
}

// rewriteOpen is rewriteAll, and whether msg ended inside a file string
// (whose verdict then depends on when the check saw it).
func rewriteOpen(msg []byte, size int, store Store) ([]byte, bool, error) {
	c := New("", func(tool string) map[string]Spec {
		if tool == "upload" {
			return map[string]Spec{"file": {Delivery: DeliveryReference, MaxSize: 1 << 20}, "inline": {}}
		}
		return nil
	})
	c.Deliver(store)
	defer c.Stop()
	var out []byte
	for i := 0; i < len(msg); i += size {
		var err error
		if out, err = c.Rewrite(msg[i:min(i+size, len(msg))], out); err != nil {
			return out, false, err
		}
	}
	return out, c.walk.st == wFileStr, nil
}

// The string of a file delivered by reference is replaced by its link
// (JSON escapes undone for the store, the link escaped for JSON), every
// other byte forwarded as it came, whatever the chunking.
func TestRewriteReplacesReferenceFile(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"note":"\"file\":x",` +
		`"file":"data:text\/plain;name=a%20b.txt;base64,aGVs\u0062G8=","inline":"data:,x"}}}`
	sum := sha256.Sum256([]byte("hello"))
	link := fmt.Sprintf("kept:a b.txt:text/plain:%x?name=a+b.txt&sha256=%x&size=5&type=text%%2Fplain", sum, sum)
	want := strings.Replace(msg, `data:text\/plain;name=a%20b.txt;base64,aGVs\u0062G8=`, link, 1)
	for size := 1; size <= len(msg); size++ {
		store := &memStore{}
		out, err := rewriteAll([]byte(msg), size, store)
		if err != nil || string(out) != want {
			t.Fatalf("chunks of %d: %v\n%s\nwant\n%s", size, err, out, want)
		}
		if got := string(store.files["a b.txt:text/plain"]); got != "hello" || len(store.files) != 1 {
			t.Fatalf("chunks of %d: stored %q", size, store.files)
		}
	}
}

// A bad file delivered by reference is refused and its bytes discarded.
func TestRewriteRefusesBadReferenceFile(t *testing.T) {
	for value, problem := range map[string]string{
		`data:text/plain;base64,aGVsb!==`:                      "not a valid data URI: bad base64",
		`https://example.com/f.txt`:                            `not a valid data URI: missing "data:" scheme`,
		`data:text/plain;base64,` + strings.Repeat("A", 2<<20): "larger than maxSize",
	} {
		store := &memStore{}
		msg := `{"params":{"name":"upload","arguments":{"file":"` + value + `"}}}`
		out, err := rewriteAll([]byte(msg), 4096, store)
		var ref *Refusal
		if !errors.As(err, &ref) || ref.Arg != "file" || !strings.Contains(ref.Problem, problem) || len(store.files) != 0 {
			t.Errorf("%.40s: %v, stored %d; want a refusal of \"file\": %s, nothing stored", value, err, len(store.files), problem)
		}
		if bytes.Contains(out, []byte(value[:min(len(value), 30)])) {
			t.Errorf("%.40s: forwarded %q", value, out)
		}
	}
}

// Rewriting gives the same bytes and, for a message that does not end
// inside a file string, the same verdict whatever the chunking, and never
// panics, on any input.
func FuzzRewriteChunking(f *testing.F) {
	f.Add([]byte(`{"params":{"name":"upload","arguments":{"file":"data:text\/plain;base64,aGVs\u0062G8=","inline":"data:,x"}}}`), uint8(3))
	f.Add([]byte(`{"params":{"name":"upload","arguments":{"file":"data:,a\"b","file":"x"}}}`), uint8(1))
	f.Fuzz(func(t *testing.T, msg []byte, size uint8) {
		out1, open1, err1 := rewriteOpen(msg, len(msg)+1, &memStore{})
		out2, open2, err2 := rewriteOpen(msg, int(size%16)+1, &memStore{})
		if open1 || open2 {
			err1, err2 = nil, nil
		}
		if fmt.Sprint(err1) != fmt.Sprint(err2) || !bytes.Equal(out1, out2) {
			t.Fatalf("whole: %q %v; in chunks of %d: %q %v", out1, err1, size%16+1, out2, err2)
		}
	})
}

// A Gate that found no file to deliver by reference reads on unrewritten:
// what it hands on is not kept (a large body leaves the heap flat).
func TestGateInlineAfterDeliverKeepsNothing(t *testing.T) {
	body := `{"params":{"name":"echo","arguments":{"text":"` + strings.Repeat("B", 1<<20) + `"}}}`
	g := NewGate(strings.NewReader(body), "", func(string) map[string]Spec { return nil }, nil)
	if g.Deliver(&memStore{}, 16<<10) {
		t.Fatal("Deliver: true for a tool without files")
	}
	got, err := io.ReadAll(g)
	if err != nil || string(got) != body {
		t.Fatalf("read %d bytes (%v); want the body as it is", len(got), err)
	}
	if n := len(g.check.walk.out); n != 0 || g.check.walk.rewrite {
		t.Fatalf("the walk kept %d bytes (rewrite %v) after reading inline; want none", n, g.check.walk.rewrite)
	}
}
