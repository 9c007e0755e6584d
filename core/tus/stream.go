package tus

import (
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mcpblob/mcpblob/storage"
)

// streamPiece is how many body bytes are read before they go to a
// StagedStreamer or StagedSender, which stores them while the next arrive;
// the last streamPiece bytes of a part go in pieces of tailPiece, so that
// little is left to store once the body's last byte arrived.
const (
	streamPiece = 1 << 20
	tailPiece   = 256 << 10
)

// pieceLen is how many bytes the next piece of the buffer's part holds.
func (a *appender) pieceLen() int {
	left := int64(len(a.buf) - a.n)
	if a.expect >= 0 {
		left = min(left, a.expect-a.got)
	}
	if left <= streamPiece {
		return tailPiece
	}
	return streamPiece
}

// maxPieces is how many pieces a part of size bytes takes at most.
func maxPieces(size int) int { return size/streamPiece + 1 + streamPiece/tailPiece }

// pieceWriter streams one part to the store on its own goroutine while
// the request reads the next pieces into the buffer (distinct bytes of it,
// so none is copied): it takes the part's number (a record write), then
// writes the pieces in order (StagedStreamer) or sends them as one part
// upload of size bytes (StagedSender). The appender's objHasher hashes
// them meanwhile on a goroutine of its own: hashing beside the writes, not
// between them, keeps the writes up with the body (one goroutine doing
// both fell behind it, and the PATCH waited for the last pieces after its
// body had arrived).
type pieceWriter struct {
	num   int   // the part's number, read after done
	off   int64 // where the part starts
	size  int64 // the part's size, for a StagedSender
	queue chan []byte
	done  chan struct{}
	part  storage.StagedPart // sent, read after done
	err   *Error             // the first failure, read after done
}

// streamOut hands the k bytes just read to the part the buffer holds,
// starting its pieceWriter at the first; a failure shows at syncPart (or
// sentPart).
func (a *appender) streamOut(k int) {
	if k == 0 || a.stream == nil && a.send == nil || a.unstreamed {
		return
	}
	if a.pieces == nil && !a.startPieces() {
		a.unstreamed = true
		return
	}
	piece := a.buf[a.n-k : a.n]
	a.pieces.queue <- piece
	a.obj.feed(piece)
	a.fed = true
}

// beginPart starts the pieceWriter of the buffer's part before its first
// byte is read, when more bytes are announced: taking the part's number
// (a record write) then overlaps the body's first piece.
func (a *appender) beginPart() {
	if a.pieces == nil && !a.unstreamed && (a.stream != nil || a.send != nil) && a.expect > a.got {
		a.unstreamed = !a.startPieces()
	}
}

// startPieces starts the pieceWriter of the buffer's part, unless it goes
// to a StagedSender and is not a part: the rest of the body is shorter
// than the store's part minimum and does not complete the upload.
func (a *appender) startPieces() bool {
	p := &pieceWriter{off: a.partOffset(), done: make(chan struct{})}
	if a.send != nil {
		p.size = min(int64(len(a.buf)), a.expect-a.got+int64(a.n)) // a.tail is 0
		if p.size < int64(a.h.Stager.StagedPartMin()) && !a.completes(p.size) {
			return false
		}
	}
	p.queue = make(chan []byte, maxPieces(len(a.buf)))
	a.pieces = p
	if a.send != nil {
		go a.sendPieces(p, a.partsLeft())
	} else {
		go a.writePieces(p, a.partsLeft())
	}
	return true
}

// writePieces is p's goroutine for a StagedStreamer. Until p is done it
// alone touches the upload's part numbers.
func (a *appender) writePieces(p *pieceWriter, partsLeft int) {
	defer close(p.done)
	p.num, p.err = a.claimOrTake(partsLeft)
	at := p.off
	for piece := range p.queue {
		if p.err == nil {
			p.err = storeError(a.stream.WriteStaged(a.ctx, a.u.Staged, p.num, at, piece))
		}
		at += int64(len(piece))
	}
}

// sendPieces is p's goroutine for a StagedSender: the part's upload reads
// the pieces as they arrive. When the part's number is still to take, the
// upload starts at once under the number the take will give, beside the
// take's compare-and-swap: its last byte waits for the take (sendTaking).
func (a *appender) sendPieces(p *pieceWriter, partsLeft int) {
	defer close(p.done)
	defer func() {
		for range p.queue { // what a failed upload left
		}
	}()
	r := &pieceReader{queue: p.queue, left: p.size}
	if len(a.reserved) == 0 {
		p.num, p.part, p.err = a.sendTaking(p, partsLeft, r)
		return
	}
	if p.num, p.err = a.takePartOf(partsLeft); p.err != nil {
		return
	}
	part, err := a.send.SendStaged(a.ctx, a.u.Staged, p.num, p.off, p.size, r)
	p.part, p.err = part, storeError(err)
}

// sendTaking sends p as the number u names next while taking it (and the
// numbers after it the body needs) by compare-and-swap. S3 stores a part
// only once its last byte arrived, and r holds that byte back until the
// take succeeded: a failed take cuts the upload, so no part is stored
// under a number this request did not take, and a number another request
// took is never overwritten. num is 0 when the take failed.
func (a *appender) sendTaking(p *pieceWriter, partsLeft int, r *pieceReader) (int, storage.StagedPart, *Error) {
	num := max(a.u.NextPart, 1)
	taken := make(chan *Error, 1)
	r.taken = taken
	go func() {
		err := a.take(partsLeft)
		if err == nil && a.reserved[0] != num {
			err = renumbered
		}
		taken <- err
	}()
	part, err := a.send.SendStaged(a.ctx, a.u.Staged, num, p.off, p.size, r)
	terr := r.takeResult()
	switch {
	case terr == renumbered:
		num, a.reserved = a.reserved[0], a.reserved[1:]
		return num, storage.StagedPart{}, terr
	case terr != nil:
		return 0, storage.StagedPart{}, terr
	}
	a.reserved = a.reserved[1:]
	return num, part, storeError(err)
}

// renumbered: the take gave another number than the one the part was
// sent under (it was taken again from the record after this node's copy
// of it proved stale, appender.retake), so the upload was cut; sentPart
// writes the part again, from the buffer, under the number taken.
var renumbered = internal(errors.New("tus: the part number taken differs from the one sent"))

// pieceReader reads the pieces of a queue until it is closed. With taken
// set, the last of the left bytes waits for the take of the part's number
// and is not read when it failed.
type pieceReader struct {
	queue chan []byte
	cur   []byte
	left  int64 // bytes of the part not yet read
	taken chan *Error
	once  sync.Once // reads taken into terr
	terr  *Error
}

func (r *pieceReader) Read(b []byte) (int, error) {
	for len(r.cur) == 0 {
		piece, ok := <-r.queue
		if !ok {
			return 0, io.EOF
		}
		r.cur = piece
	}
	n := min(len(b), len(r.cur))
	if r.taken != nil && int64(n) >= r.left {
		if err := r.takeResult(); err != nil {
			return 0, err
		}
	}
	copy(b, r.cur[:n])
	r.cur, r.left = r.cur[n:], r.left-int64(n)
	return n, nil
}

// takeResult waits for the take of r's part number. The upload's reader
// and sendTaking may both ask, from two goroutines.
func (r *pieceReader) takeResult() *Error {
	r.once.Do(func() { r.terr = <-r.taken })
	return r.terr
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
	case errors.Is(err, storage.ErrPreconditionFailed), errors.Is(err, storage.ErrStagedGone):
		// Another request moved the upload on meanwhile: a PATCH at the
		// same offset that completed it (its staged write committed and
		// gone) or a termination.
		return overtaken()
	case errors.Is(err, storage.ErrQuotaExceeded):
		return &Error{Status: http.StatusForbidden, Code: "quota_exceeded", Message: "quota exceeded", Err: err}
	case errors.Is(err, storage.ErrTooLarge):
		// The store's part limit (S3's 10,000; the numbers taken by cut
		// requests count too), the only ErrTooLarge of a part.
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Err: err,
			Message: "the upload needs more parts than the store takes (S3 takes 10,000 per object); nothing was appended"}
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

// sentPart waits for the upload of the part sent as it arrived. A body
// cut before the part's end stored nothing, and an upload failing on the
// way (a reset connection, a 5xx: a streamed body is not sent twice)
// neither: then sent is false, and the bytes that arrived, all in the
// buffer, are written as if none had been sent (PutStaged retries), under
// the part number taken for it.
func (a *appender) sentPart() (seg Segment, sent bool, err *Error) {
	p := a.pieces
	a.pieces = nil
	werr := p.wait()
	switch {
	case int64(a.n) == p.size && werr == nil:
		return Segment{Size: p.size, Part: &p.part}, true, nil
	case p.num == 0 || werr != nil && werr.Status < http.StatusInternalServerError:
		return Segment{}, false, werr // no number taken, or refused (409, 413)
	}
	a.reserved = append([]int{p.num}, a.reserved...)
	return Segment{}, false, nil
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
