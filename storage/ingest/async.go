package ingest

import (
	"errors"
	"io"
	"sync"
)

// ChunkSize is the size of the writes an [AsyncWriter] hands to its
// destination.
const ChunkSize = 1 << 20

// asyncBufs is how many chunks one AsyncWriter holds at most: one being
// filled, one being written, one queued.
const asyncBufs = 3

// FirstChunkSize is the size of an upload's first chunk: an upload smaller
// than it, or one whose bytes trickle in, holds this much rather than
// ChunkSize; the chunks after it are full size.
const FirstChunkSize = 64 << 10

// chunks and firstChunks recycle the chunk buffers across uploads, so a
// small upload does not allocate megabytes.
var (
	chunks      = sync.Pool{New: func() any { b := make([]byte, 0, ChunkSize); return &b }}
	firstChunks = sync.Pool{New: func() any { b := make([]byte, 0, FirstChunkSize); return &b }}
)

// errAsyncClosed is returned by a Write after Close.
var errAsyncClosed = errors.New("ingest: write after close")

// AsyncWriter hands what is written to it to another io.Writer on another
// goroutine, in chunks of [ChunkSize] bytes, so producing the next bytes
// (decoding, parsing, reading a socket) overlaps the destination's hashing
// and writing of the last ones (on 2 cores about 1.5× on a large upload). It
// holds at most three chunks, taken from a pool when first needed; the
// first is only [FirstChunkSize] bytes, and an upload smaller than that is
// written on Close by the caller's goroutine, without starting another.
//
// The first error of the destination is sticky: later Writes return it
// (the bytes in flight are dropped) and Close returns it. An AsyncWriter is
// meant for one goroutine; Close must be called to end the writer goroutine
// and give the chunks back.
type AsyncWriter struct {
	w      io.Writer
	cur    *[]byte      // the chunk being filled; nil until needed
	nbufs  int          // chunks taken from the pool
	work   chan *[]byte // to the writer goroutine; nil until it starts
	free   chan *[]byte // back from it
	done   chan struct{}
	closed bool

	mu  sync.Mutex
	err error
}

// NewAsyncWriter returns an AsyncWriter writing to w.
func NewAsyncWriter(w io.Writer) *AsyncWriter { return &AsyncWriter{w: w} }

// failed returns the sticky error.
func (a *AsyncWriter) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// stop records err as the sticky error unless there is one already: the
// writer goroutine skips what is still queued and Close writes nothing more.
func (a *AsyncWriter) stop(err error) {
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.mu.Unlock()
}

// next returns an empty chunk: the small first one, else a free one, a new
// one from the pool while fewer than asyncBufs are out, else the next one
// the goroutine gives back. The first chunk is not used again once it
// comes back.
func (a *AsyncWriter) next() *[]byte {
	if a.nbufs == 0 && a.work == nil {
		a.nbufs++
		return firstChunks.Get().(*[]byte)
	}
	for {
		var b *[]byte
		select {
		case b = <-a.free: // a nil channel (no goroutine yet) is never ready
		default:
			if a.nbufs < asyncBufs {
				a.nbufs++
				return chunks.Get().(*[]byte)
			}
			b = <-a.free
		}
		if cap(*b) == ChunkSize {
			return b
		}
		a.put(b)
		a.nbufs--
	}
}

// hand queues the full current chunk for the writer goroutine, starting it
// on first use.
func (a *AsyncWriter) hand() {
	if a.work == nil {
		a.work = make(chan *[]byte, asyncBufs)
		a.free = make(chan *[]byte, asyncBufs)
		a.done = make(chan struct{})
		go a.run()
	}
	a.work <- a.cur
	a.cur = nil
}

func (a *AsyncWriter) run() {
	defer close(a.done)
	for b := range a.work {
		if a.failed() == nil {
			if _, err := a.w.Write(*b); err != nil {
				a.stop(err)
			}
		}
		*b = (*b)[:0]
		a.free <- b
	}
}

// Write copies p into the current chunk, handing each full chunk to the
// writer goroutine; it blocks while three chunks are out. It returns the
// destination's first error, if any happened so far.
func (a *AsyncWriter) Write(p []byte) (int, error) {
	if a.closed {
		return 0, errAsyncClosed
	}
	if err := a.failed(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		if a.cur == nil {
			a.cur = a.next()
		}
		b := *a.cur
		k := copy(b[len(b):cap(b)], p)
		*a.cur = b[:len(b)+k]
		p = p[k:]
		if len(*a.cur) == cap(*a.cur) {
			a.hand()
		}
	}
	return n, nil
}

// ReadFrom reads r into the chunks directly (no intermediate copy) until
// io.EOF, handing each full chunk to the writer goroutine. It returns the
// bytes read and the first error of r or of the destination.
func (a *AsyncWriter) ReadFrom(r io.Reader) (int64, error) {
	if a.closed {
		return 0, errAsyncClosed
	}
	var n int64
	for {
		if err := a.failed(); err != nil {
			return n, err
		}
		if a.cur == nil {
			a.cur = a.next()
		}
		b := *a.cur
		k, err := r.Read(b[len(b):cap(b)])
		*a.cur = b[:len(b)+k]
		n += int64(k)
		if len(*a.cur) == cap(*a.cur) {
			a.hand()
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Close writes what is left (unless a write failed), waits for the writer
// goroutine and gives the chunks back. It returns the destination's first
// error. Later calls return the same.
func (a *AsyncWriter) Close() error {
	if a.closed {
		return a.failed()
	}
	a.closed = true
	if a.cur != nil && len(*a.cur) > 0 {
		if a.work == nil {
			// Less than one chunk in all: write it here.
			if a.failed() == nil {
				if _, err := a.w.Write(*a.cur); err != nil {
					a.stop(err)
				}
			}
		} else {
			a.hand()
		}
	}
	if a.work != nil {
		close(a.work)
		<-a.done
		for range len(a.free) {
			a.put(<-a.free)
		}
		a.work, a.free = nil, nil
	}
	if a.cur != nil {
		a.put(a.cur)
		a.cur = nil
	}
	return a.failed()
}

func (a *AsyncWriter) put(b *[]byte) {
	*b = (*b)[:0]
	if cap(*b) == ChunkSize {
		chunks.Put(b)
	} else {
		firstChunks.Put(b)
	}
}
