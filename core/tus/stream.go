package tus

import (
	"errors"
	"net/http"

	"github.com/mcpblob/mcpblob/storage"
)

// streamPiece is how many body bytes are read before they go to a
// StagedStreamer, which writes them while the next arrive.
const streamPiece = 1 << 20

// pieceWriter streams one part to a StagedStreamer on its own goroutine
// while the request reads the next pieces into the buffer (distinct bytes
// of it, so none is copied): it takes the part's number (a record write),
// then writes the pieces in order and adds them to the upload's SHA-256.
type pieceWriter struct {
	num   int   // the part's number, read after done
	off   int64 // where the part starts
	queue chan []byte
	done  chan struct{}
	err   *Error // the first failure, read after done
}

// streamOut hands the k bytes just read to the part the buffer holds,
// starting its pieceWriter at the first; a failure shows at syncPart.
func (a *appender) streamOut(k int) {
	if a.stream == nil || k == 0 {
		return
	}
	if a.pieces == nil {
		a.pieces = &pieceWriter{off: a.partOffset(), queue: make(chan []byte, len(a.buf)/streamPiece+1), done: make(chan struct{})}
		go a.writePieces(a.pieces, a.partsLeft())
	}
	a.pieces.queue <- a.buf[a.n-k : a.n]
}

// writePieces is p's goroutine. Until p is done it alone touches the
// upload's part numbers and SHA-256.
func (a *appender) writePieces(p *pieceWriter, partsLeft int) {
	defer close(p.done)
	p.num, p.err = a.takePartOf(partsLeft)
	at := p.off
	for piece := range p.queue {
		if p.err == nil {
			err := a.stream.WriteStaged(a.ctx, a.u.Staged, p.num, at, piece)
			p.err = storeError(err)
			a.obj.Write(piece)
		}
		at += int64(len(piece))
	}
}

// wait ends the writes and returns the first failure.
func (p *pieceWriter) wait() *Error {
	close(p.queue)
	<-p.done
	return p.err
}

func storeError(err error) *Error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrPreconditionFailed):
		return overtaken()
	case errors.Is(err, storage.ErrQuotaExceeded):
		return &Error{Status: http.StatusForbidden, Code: "quota_exceeded", Message: "quota exceeded", Err: err}
	}
	return internal(err)
}

// syncPart waits for the pieces streamed to the store and makes the part
// of size bytes they hold durable.
func (a *appender) syncPart(size int64) (Segment, *Error) {
	p := a.pieces
	a.pieces = nil
	if err := p.wait(); err != nil {
		return Segment{}, err
	}
	part, err := a.stream.SyncStaged(a.ctx, a.u.Staged, p.num, p.off, size)
	if err != nil {
		return Segment{}, storeError(err)
	}
	return Segment{Size: size, Part: &part}, nil
}

// stopStream waits for the pieces of a request that ends before its part
// was synced (refused, cut): they are bytes past the durable offset,
// garbage the next writer cuts.
func (a *appender) stopStream() {
	if a.pieces != nil {
		_ = a.pieces.wait()
		a.pieces = nil
	}
}
