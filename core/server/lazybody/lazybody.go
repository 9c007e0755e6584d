// Package lazybody reads request bodies through a buffer that starts small
// and grows only for a body that arrives fast: a trickling client never
// holds a large buffer, a fast one gets large socket reads.
package lazybody

import (
	"io"
	"sync"
)

// Reader is a buffered reader over a request body (for mime/multipart,
// whose own reads are 4 KiB) whose buffer starts at 16 KiB and is swapped
// for a pooled 1 MiB one once a single read fills it: a fast body gets
// large socket reads, a trickling one never holds the large buffer.
type Reader struct {
	r      io.Reader
	bufp   *[]byte // from smallBodyBufs, then from bigBodyBufs
	big    bool
	lo, hi int
	err    error // of the read that filled the buffer, returned once it is drained
	grow   bool  // the last read filled the buffer
}

var (
	smallBodyBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}
	bigBodyBufs   = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}
)

// New returns a Reader over r with a small pooled buffer.
func New(r io.Reader) *Reader {
	return &Reader{r: r, bufp: smallBodyBufs.Get().(*[]byte)}
}

// Read fills p from the buffer, refilling it from the body when empty.
func (l *Reader) Read(p []byte) (int, error) {
	if l.lo == l.hi {
		if l.err != nil {
			err := l.err
			l.err = nil
			return 0, err
		}
		if l.grow && !l.big {
			smallBodyBufs.Put(l.bufp)
			l.bufp, l.big = bigBodyBufs.Get().(*[]byte), true
		}
		buf := *l.bufp
		n, err := l.r.Read(buf)
		l.lo, l.hi, l.grow = 0, n, n == len(buf)
		if n == 0 {
			return 0, err
		}
		l.err = err
	}
	n := copy(p, (*l.bufp)[l.lo:l.hi])
	l.lo += n
	return n, nil
}

// Release gives the buffer back; the reader must not be used after.
func (l *Reader) Release() {
	switch {
	case l.bufp == nil:
	case l.big:
		bigBodyBufs.Put(l.bufp)
	default:
		smallBodyBufs.Put(l.bufp)
	}
	l.bufp = nil
}

// Large reports whether the reader took the large buffer.
func (l *Reader) Large() bool { return l.big }
