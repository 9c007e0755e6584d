package contents

import (
	"io"
	"sync"

	"github.com/mcpblob/mcpblob/core/codec"
)

// largeBody is the smallest body that asks for a larger socket send
// buffer, and that may be encoded ahead on a second goroutine: below it the
// goroutine and the second buffer cost more than the overlap wins.
const largeBody = 8 << 20

// sendBuffer is the socket send buffer a large body asks for while its
// stream runs nearly alone (through an optional SetWriteBuffer method of its
// writer): a deeper queue keeps the client fed across scheduling gaps.
const sendBuffer = 4 << 20

// writeBase64 streams n bytes of r to w as standard padded base64, within
// the process's memory budget (see budget.write).
func writeBase64(w io.Writer, r io.Reader, n int64) error { return streams.write(w, r, n) }

// write streams n bytes of r to w as standard padded base64, from mapped
// windows when r is a local file. A large body in a stream running nearly
// alone asks for a larger send buffer, and where a core is spare is encoded
// ahead on a second goroutine while the caller writes; other streams encode
// inline into buffers that shrink as streams are added.
func (b *budget) write(w io.Writer, r io.Reader, n int64) error {
	alone, ahead, leave := b.join()
	defer leave()
	src := newSource(r, n)
	defer src.close()
	if alone && n >= largeBody {
		if s, ok := w.(interface{ SetWriteBuffer(bytes int) error }); ok {
			_ = s.SetWriteBuffer(sendBuffer)
		}
	}
	if ahead && n >= largeBody {
		p := b.reserve(n, src.mappable(), true)
		defer b.release(p)
		return encodeAhead(w, src, n, p)
	}
	return b.encodeInline(w, src, n)
}

// encodeInline encodes and writes chunk after chunk, reserving a plan from
// the budget for each, so a stream shrinks its buffers as others join. The
// base64 buffer goes back to its pool, and the plan to the budget, after
// every write.
func (b *budget) encodeInline(w io.Writer, src source, left int64) error {
	for left > 0 {
		p := b.reserve(left, src.mappable(), false)
		bp := getOut(p.out)
		k, err := src.encode(p, *bp, left)
		if k > 0 && err == nil {
			_, err = w.Write((*bp)[:codec.StdEncoding.EncodedLen(k)])
		}
		putOut(bp)
		b.release(p)
		if err != nil {
			return err
		}
		left -= int64(k)
	}
	return nil
}

// encodeAhead runs the encoder on its own goroutine, p.depth buffers
// ahead, while this one writes: the encoding of chunk k+1 overlaps the
// write(2) of chunk k. The encoder stops when a write fails, and it has
// finished with src before encodeAhead returns.
func encodeAhead(w io.Writer, src source, left int64, p plan) error {
	type chunk struct {
		buf *[]byte
		n   int
	}
	full := make(chan chunk, p.depth)
	free := make(chan *[]byte, p.depth)
	for range p.depth {
		free <- getOut(p.out)
	}
	quit := make(chan struct{})
	stop := sync.OnceFunc(func() { close(quit) })
	var encErr error
	go func() {
		defer close(full)
		for left > 0 {
			var bp *[]byte
			select {
			case <-quit:
				return
			case bp = <-free:
			}
			k, err := src.encode(p, *bp, left)
			if err != nil {
				encErr = err
				free <- bp
				return
			}
			left -= int64(k)
			full <- chunk{bp, codec.StdEncoding.EncodedLen(k)}
		}
	}()
	defer func() {
		stop()
		for c := range full { // the encoder is done with src once full closes
			putOut(c.buf)
		}
	}()
	var werr error
	for c := range full {
		if werr == nil {
			if _, err := w.Write((*c.buf)[:c.n]); err != nil {
				werr = err
				stop()
			}
		}
		free <- c.buf
	}
	for range p.depth {
		putOut(<-free)
	}
	if werr != nil {
		return werr
	}
	return encErr
}
