package readahead

import (
	"errors"
	"io"
	"sync"
	"time"
)

// Reader reads a body on a goroutine of its own, through two pooled
// buffers, until the body ends or End is called; the goroutine ends with
// the body, which the caller closes. Each buffer goes back to the pool
// from the side that holds it last (End, putFree, or the caller through
// Release). First and Second are reads already made (by Start, WaitFirst
// or Whole) that the caller has not taken yet; the rest come from Reads.
type Reader struct {
	First  *Chunk // read by Start or WaitFirst and not yet taken
	Second *Chunk // read by Whole and not yet taken
	reads  chan Chunk
	free   chan *[]byte
	stop   chan struct{}
	pool   *sync.Pool
	timer  *time.Timer
}

// Chunk is one read of the body: (*Buf)[:N], and the read's error (io.EOF
// at the body's end). Its buffer goes back with Release once used.
type Chunk struct {
	Buf *[]byte
	N   int
	Err error
}

// Reads is the reader's reads after First and Second.
func (rd *Reader) Reads() <-chan Chunk { return rd.reads }

// Release gives a taken chunk's buffer back to the reader (room: two
// buffers, and this one is out).
func (rd *Reader) Release(buf *[]byte) { rd.free <- buf }

// Start starts reading body, its buffers from pool (of *[]byte). When the transport holds the whole of
// it (inBuffer), its first buffer is read here, on the caller's goroutine:
// an answer that ends in it is then rd.First with its end (io.EOF), and
// no reader goroutine starts.
func Start(body io.Reader, inBuffer bool, pool *sync.Pool) *Reader {
	rd := &Reader{reads: make(chan Chunk), free: make(chan *[]byte, 2), stop: make(chan struct{}), pool: pool}
	rd.free <- pool.Get().(*[]byte)
	rd.free <- pool.Get().(*[]byte)
	if inBuffer {
		bp := <-rd.free
		n, err := fill(body, *bp)
		rd.First = &Chunk{bp, n, err}
		if err != nil {
			return rd // the answer's end: nothing left to read
		}
	}
	go rd.run(body)
	return rd
}

// fill reads body into p until p is full, the body ends or a read brings
// nothing.
func fill(body io.Reader, p []byte) (n int, err error) {
	for n < len(p) && err == nil {
		var k int
		k, err = body.Read(p[n:])
		n += k
		if k == 0 {
			break
		}
	}
	return n, err
}

func (rd *Reader) run(body io.Reader) {
	for {
		var bp *[]byte
		select {
		case bp = <-rd.free:
		case <-rd.stop:
			return
		}
		n, err := body.Read(*bp)
		select {
		case rd.reads <- Chunk{bp, n, err}:
		case <-rd.stop:
			rd.pool.Put(bp) // never handed over: this side holds it last
			return
		}
		if err != nil {
			return
		}
	}
}

// Await waits up to d for the reader's next read (one timer for the
// reader's waits).
func (rd *Reader) Await(d time.Duration) (Chunk, bool) {
	if rd.timer == nil {
		rd.timer = time.NewTimer(d)
	} else {
		rd.timer.Reset(d)
	}
	defer rd.timer.Stop()
	select {
	case c := <-rd.reads:
		return c, true
	case <-rd.timer.C:
		return Chunk{}, false
	}
}

// WaitFirst waits up to d for the first read and keeps it in First;
// it reports whether the read came.
func (rd *Reader) WaitFirst(d time.Duration) bool {
	c, ok := rd.Await(d)
	if ok {
		rd.First = &c
	}
	return ok
}

// Whole reports whether the first read (WaitFirst) is the whole body:
// it ended the body, or the next read, within d, ends it with nothing more.
// A next read with more is kept in Second.
func (rd *Reader) Whole(d time.Duration) bool {
	if rd.First.Err != nil {
		return errors.Is(rd.First.Err, io.EOF)
	}
	c, ok := rd.Await(d)
	switch {
	case !ok:
		return false
	case c.N == 0 && errors.Is(c.Err, io.EOF):
		rd.free <- c.Buf // room: two buffers, and this one is out
		rd.First.Err = io.EOF
		return true
	}
	rd.Second = &c
	return false
}

// End stops the reader and puts the buffers it does not hold back in the
// pool.
func (rd *Reader) End() {
	close(rd.stop)
	for _, c := range []*Chunk{rd.First, rd.Second} {
		if c != nil {
			rd.free <- c.Buf // room: two buffers, and this one is out
		}
	}
	rd.First, rd.Second = nil, nil
	putFree(rd.free, rd.pool)
}

// putFree puts the buffers left in free back in the pool, once an Reader
// was told to stop: a buffer in free is taken by one side only (the
// reader, which then puts it back itself, or this), a buffer the reader
// holds goes back from the reader, and one handed over is in free again.
func putFree(free chan *[]byte, pool *sync.Pool) {
	for {
		select {
		case bp := <-free:
			pool.Put(bp)
		default:
			return
		}
	}
}
