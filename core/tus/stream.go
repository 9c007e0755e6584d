package tus

import (
	"context"
	"errors"

	"github.com/mcpblob/mcpblob/storage"
)

// streamPiece is how many body bytes are read before they go to a
// StagedStreamer, which writes them while the next arrive.
const streamPiece = 1 << 20

// pieceWriter writes one part's pieces to a StagedStreamer on its own
// goroutine, in order, while the request reads the next ones into the
// buffer (the pieces are distinct bytes of it, so none is copied).
type pieceWriter struct {
	num   int   // the part's number
	off   int64 // where the part starts
	queue chan []byte
	done  chan struct{}
	err   error // the first failure, read after done
}

func startPieces(ctx context.Context, st storage.StagedStreamer, staged string, num int, off int64) *pieceWriter {
	p := &pieceWriter{num: num, off: off, queue: make(chan []byte, 8), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		at := off
		for piece := range p.queue {
			if p.err == nil {
				p.err = st.WriteStaged(ctx, staged, num, at, piece)
			}
			at += int64(len(piece))
		}
	}()
	return p
}

// wait ends the writes and returns the first failure.
func (p *pieceWriter) wait() error {
	close(p.queue)
	<-p.done
	return p.err
}

// streamOut hands the k bytes just read to the StagedStreamer, as part of
// the segment the buffer holds, taking the part's number first.
func (a *appender) streamOut(k int) *Error {
	if a.stream == nil || k == 0 {
		return nil
	}
	if a.pieces == nil {
		num, err := a.takePart()
		if err != nil {
			return err
		}
		a.pieces = startPieces(a.ctx, a.stream, a.u.Staged, num, a.partOffset())
	}
	a.pieces.queue <- a.buf[a.n-k : a.n]
	return nil
}

// syncPart waits for the pieces streamed to the store and makes the part
// of size bytes they hold durable.
func (a *appender) syncPart(size int64) (Segment, *Error) {
	p := a.pieces
	a.pieces = nil
	err := p.wait()
	var part storage.StagedPart
	if err == nil {
		part, err = a.stream.SyncStaged(a.ctx, a.u.Staged, p.num, p.off, size)
	}
	switch {
	case errors.Is(err, storage.ErrPreconditionFailed):
		return Segment{}, overtaken()
	case err != nil:
		return Segment{}, internal(err)
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
