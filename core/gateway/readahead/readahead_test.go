package readahead

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingPool is a buffer pool that counts the buffers it made.
type countingPool struct {
	sync.Pool
	made atomic.Int64
}

func newPool() *countingPool {
	p := &countingPool{}
	p.New = func() any { p.made.Add(1); b := make([]byte, 64); return &b }
	return p
}

// A silent body times Await out; its first bytes come through WaitFirst,
// and its end with nothing more makes the first read the whole body.
func TestWaitsAndWhole(t *testing.T) {
	pr, pw := io.Pipe()
	p := newPool()
	rd := Start(pr, false, &p.Pool)
	if _, ok := rd.Await(10 * time.Millisecond); ok {
		t.Fatal("Await returned a read of a silent body")
	}
	go func() { pw.Write([]byte("data: 1\n\n")); pw.Close() }()
	if !rd.WaitFirst(5 * time.Second) {
		t.Fatal("WaitFirst: no read")
	}
	if got := string((*rd.First.Buf)[:rd.First.N]); got != "data: 1\n\n" {
		t.Fatalf("first read %q", got)
	}
	if !rd.Whole(5*time.Second) || !errors.Is(rd.First.Err, io.EOF) {
		t.Fatalf("Whole: false or first read's error %v; want the whole body", rd.First.Err)
	}
	rd.End()
}

// A body with more than its first read keeps the second in Second; the
// reader takes two buffers from the pool, no more.
func TestSecondReadKeptAndBuffersBack(t *testing.T) {
	pr, pw := io.Pipe()
	p := newPool()
	rd := Start(pr, false, &p.Pool)
	go pw.Write([]byte("one"))
	if !rd.WaitFirst(5 * time.Second) {
		t.Fatal("WaitFirst: no read")
	}
	go pw.Write([]byte("two"))
	if rd.Whole(5 * time.Second) {
		t.Fatal("a body with a second read is reported whole")
	}
	if rd.Second == nil || string((*rd.Second.Buf)[:rd.Second.N]) != "two" {
		t.Fatalf("second read %+v; want \"two\"", rd.Second)
	}
	rd.End()
	pw.CloseWithError(errors.New("gone")) // the reader goroutine, if reading, ends
	if p.made.Load() != 2 {
		t.Fatalf("%d buffers made; want the reader's two", p.made.Load())
	}
}
