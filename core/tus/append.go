package tus

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"hash"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/storage"
)

// appender moves one request body into segments of u. A segment is
// written (and durable) before the upload's record names it, and the
// record is replaced by compare-and-swap, so a HEAD reports only durable
// bytes and of two requests appending at one offset only the first to
// commit does; the other gets 409 and what it wrote is garbage (its
// records are deleted; its parts are overwritten or aborted).
//
// A segment is at most SegmentSize bytes, held in one buffer: the memory
// of a PATCH, whatever the upload's size. A staged upload's segments are
// parts of its staged write, written where the object will live; a short
// last segment (the end of a small PATCH, or of a cut one, under the
// store's part minimum) is a record, read back by the next PATCH and
// replaced by a part holding it and the new bytes, as tusd's S3 store
// merges an incomplete part into the next. An upload without a staged
// write keeps every segment as a record, merged the same way.
//
// Part numbers are taken by compare-and-swap before the parts are written
// (Upload.NextPart), so no two requests ever write one number: a request
// that another replaced (a client that gave up on a stalled connection
// and resumed) writes only numbers nobody will name. On a store whose
// parts have one writer process (the local store) a request of one part
// claims the number the record names next from the store, in memory,
// instead (claimOrTake): the record is then written once per PATCH.
//
// With a Content-Length and no Upload-Checksum each full segment is
// committed as it is written. With Upload-Checksum, segments are committed
// together once the digest matched, and none otherwise (460); without a
// Content-Length, once the body ended within the upload's length, and none
// when it runs past (413). A body cut short keeps what arrived, unless a
// checksum was to cover it.
type appender struct {
	h      *Handler
	u      *Upload
	ctx    context.Context
	sum    *Checksum
	hash   hash.Hash  // of Upload-Checksum
	obj    *objHasher // SHA-256 of a staged upload's bytes, committed ones and pending
	fed    bool       // the buffer's bytes went to obj piece by piece
	reader storage.StagedReader
	head   []byte // Upload.Head with the pending bytes
	added  int64  // bytes committed
	hold   bool   // commit only once the body ended
	expect int64  // the body's Content-Length, -1 when unknown
	got    int64  // body bytes read

	buf      []byte
	n        int       // bytes in buf
	tail     int       // of them, the merged last segment's
	replace  bool      // the next commit replaces u's last segment
	pending  []Segment // written, not yet committed (checksum)
	staged   int64     // new bytes in pending
	reserved []int     // part numbers taken and not yet written

	// A store that takes a part's bytes as they arrive (a
	// storage.StagedStreamer, or a storage.StagedSender for a part whose
	// size the Content-Length tells) gets each piece of the buffer as it
	// is read (stream.go).
	stream     storage.StagedStreamer
	send       storage.StagedSender
	claim      storage.StagedClaimer // a store whose parts have one writer process
	claimed    int                   // the part number claimed (claimOrTake), 0 if none
	pieces     *pieceWriter          // nil until the first piece
	unstreamed bool                  // the buffer's part is not sent as it arrives
}

func (a *appender) run(body io.Reader, limit int64) *Error {
	b := getBuffer(a.h.SegmentSize)
	defer putBuffer(b)
	defer a.stopStream() // before the buffer goes back
	defer a.handOff()
	a.buf = *b
	if err := a.start(); err != nil {
		return err
	}
	r := io.LimitReader(body, limit+1)
	for {
		a.beginPart()
		k, rerr := a.read(r)
		if a.got > limit {
			a.discard()
			return refuse(http.StatusRequestEntityTooLarge, "too_large", "the body runs past the upload's length or Tus-Max-Size")
		}
		a.streamOut(k)
		if rerr == nil && a.n < len(a.buf) {
			continue // a piece went to the store; the segment is not full
		}
		ended := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		// A body that ends before its Content-Length was cut, too.
		cut := rerr != nil && !ended || ended && a.expect >= 0 && a.got < a.expect
		if err := a.flush(a.n == len(a.buf) || ended && !cut || cut && a.sum == nil); err != nil {
			return err
		}
		switch {
		case cut:
			return a.cut(rerr)
		case ended:
			return a.verify()
		}
	}
}

// read reads the body into the buffer: until it is full, or one piece
// when the store takes the bytes as they arrive.
func (a *appender) read(r io.Reader) (int, error) {
	if a.n == 0 && (a.added > 0 || len(a.pending) > 0) {
		a.obj.drain() // the buffer's last part, before the buffer takes the next
	}
	end := len(a.buf)
	if a.stream != nil || a.send != nil {
		end = min(end, a.n+a.pieceLen())
	}
	k, err := io.ReadFull(r, a.buf[a.n:end])
	if a.hash != nil {
		a.hash.Write(a.buf[a.n : a.n+k])
	}
	a.n, a.got = a.n+k, a.got+int64(k)
	if err == nil && end < len(a.buf) && a.n == end {
		return k, nil // the piece is full; the body may go on
	}
	return k, err
}

// cut ends a request whose body was cut short: what arrived is kept,
// unless a checksum was to cover it. A body cut by a read timeout (the
// surface's minimum rate) answers 408, as the other upload surfaces do;
// another cut 400.
func (a *appender) cut(rerr error) *Error {
	if a.sum == nil {
		if err := a.commit(); err != nil {
			return err
		}
	}
	a.discard()
	kept := "the bytes before are kept"
	if a.sum != nil {
		kept = "nothing was appended (Upload-Checksum covers the whole body)"
	}
	var timeout interface{ Timeout() bool }
	if errors.As(rerr, &timeout) && timeout.Timeout() {
		return &Error{Status: http.StatusRequestTimeout, Code: "timeout",
			Message: "the request body arrived slower than the minimum rate; " + kept + ", HEAD the upload to resume", Err: rerr}
	}
	return &Error{Status: http.StatusBadRequest, Code: "bad_request",
		Message: "the body was cut short; " + kept + ", HEAD the upload to resume", Err: rerr}
}

// start resumes a staged upload's SHA-256, loads u's last segment, and
// streams the body to a store that takes a part's bytes as they arrive.
func (a *appender) start() *Error {
	if a.u.Staged != "" {
		if err := a.startHash(); err != nil {
			return err
		}
		a.head = bytes.Clone(a.u.Head)
	}
	if err := a.mergeTail(); err != nil {
		return err
	}
	switch {
	case a.u.Staged == "" || a.tail > 0:
	case a.h.Stager.StagedPartMin() <= 1:
		a.stream = storage.StreamerOf(a.h.Stager) // every segment is a part
		a.claim = storage.ClaimerOf(a.h.Stager)
	case a.expect > 0:
		a.send = storage.SenderOf(a.h.Stager)
	}
	return nil
}

// startHash starts the SHA-256 of a staged upload's new bytes after the
// state of its durable ones.
func (a *appender) startHash() *Error {
	sum, at, err := a.h.objState(a.u)
	if err != nil {
		return err
	}
	a.reader = storage.StagedReaderOf(a.h.Stager)
	var read readStaged
	if at < a.u.Offset {
		read = func(p []byte, off int64) (int, error) { return a.reader.ReadStaged(a.ctx, a.u.Staged, off, p) }
	}
	o, merr := newObjHasher(sum, at, a.u.Offset, read, maxPieces(len(a.buf))+1)
	if merr != nil {
		return internal(merr)
	}
	a.obj = o
	return nil
}

// hashState is the SHA-256 state u's record keeps when it names offset
// bytes: as far as hashed, where the store reads the rest back, else (and
// when offset completes u) all of them.
func (a *appender) hashState(offset int64) []byte {
	if a.reader == nil || a.u.Length >= 0 && offset == a.u.Length {
		a.obj.drain()
	}
	_, state := a.obj.snapshot()
	return state
}

// mergeTail loads u's last segment into the buffer when it is a short
// record.
func (a *appender) mergeTail() *Error {
	segs := a.u.Segments
	if len(segs) == 0 || segs[len(segs)-1].Part != nil || segs[len(segs)-1].Size >= int64(a.h.SegmentSize) {
		return nil
	}
	data, _, err := a.h.rec.GetRecord(a.ctx, segs[len(segs)-1].Name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		// Another request replaced the segment since u was read: u is stale.
		return overtaken()
	case err != nil:
		return internal(err)
	}
	a.n = copy(a.buf, data)
	a.tail, a.replace = a.n, true
	return nil
}

func overtaken() *Error {
	return refuse(http.StatusConflict, "offset_mismatch", "another request appended to the upload first; HEAD the upload and resume from its offset")
}

// flush writes the buffer's new bytes as a segment when now is set, and
// commits it unless a checksum is pending. A complete staged upload whose
// last segment is a record writes it as its last part (sealing).
func (a *appender) flush(now bool) *Error {
	fresh := int64(a.n - a.tail)
	sealing := a.tail > 0 && a.u.Staged != "" && a.completes(0)
	if !now || fresh == 0 && !sealing {
		return nil
	}
	seg, err := a.write(fresh)
	if err != nil {
		a.discard()
		return err
	}
	a.pending, a.staged = append(a.pending, seg), a.staged+fresh
	a.n, a.tail, a.unstreamed, a.fed = 0, 0, false, false
	if a.hold {
		return nil
	}
	return a.commit()
}

// completes reports whether fresh more bytes than pending complete u.
func (a *appender) completes(fresh int64) bool {
	return a.u.Length >= 0 && a.u.Offset+a.staged+fresh == a.u.Length
}

// write stores the buffer as a segment: a part of the staged write, or a
// record (no staged write, or too short for a part but the last).
func (a *appender) write(fresh int64) (Segment, *Error) {
	data := a.buf[:a.n]
	st := a.h.Stager
	if a.u.Staged != "" {
		if n := min(HeadLen-len(a.head), len(data)-a.tail); n > 0 {
			a.head = append(a.head, data[a.tail:a.tail+n]...)
		}
		if a.pieces != nil && a.send != nil {
			if seg, sent, err := a.sentPart(); sent || err != nil {
				return seg, err
			}
		}
		// The SHA-256 runs beside the write (it reads what the write
		// reads); streamed pieces were fed to it as they went to the store.
		if !a.fed {
			a.obj.feed(data[a.tail:])
			defer a.obj.drain()
		}
		if a.n >= st.StagedPartMin() || a.completes(fresh) {
			return a.writePart(data)
		}
	}
	seg := Segment{Name: a.h.segmentName(a.u.ID), Size: int64(a.n)}
	if _, err := a.h.rec.PutRecord(a.ctx, seg.Name, data, ""); err != nil {
		return Segment{}, internal(err)
	}
	return seg, nil
}

// writePart writes data as the next part, at the offset the parts before
// it end.
func (a *appender) writePart(data []byte) (Segment, *Error) {
	if a.pieces != nil {
		return a.syncPart(int64(len(data)))
	}
	num, err := a.takePart()
	if err != nil {
		return Segment{}, err
	}
	part, perr := a.h.Stager.PutStaged(a.ctx, a.u.Staged, num, a.partOffset(), data)
	if perr != nil {
		return Segment{}, storeError(perr)
	}
	return Segment{Size: int64(len(data)), Part: &part}, nil
}

// partOffset is where the next part starts: where the parts named and
// pending end.
func (a *appender) partOffset() int64 {
	return storage.StagedSize(stagedParts(a.u.Segments)) + storage.StagedSize(stagedParts(a.pending))
}

// takePart returns a part number this request took, taking as many as
// the rest of the body needs (by compare-and-swap of u) when none is left.
func (a *appender) takePart() (int, *Error) {
	return a.takePartOf(a.partsLeft())
}

// partsLeft is how many parts the rest of the body fills: S3 takes
// 10,000 parts, so a request takes no more.
func (a *appender) partsLeft() int {
	if seg := int64(a.h.SegmentSize); a.expect >= 0 {
		return max(1, int((int64(a.n)+a.expect-a.got+seg-1)/seg))
	}
	return 1
}

// takePartOf is takePart with partsLeft given (by the goroutine that
// reads the body, for a pieceWriter's).
func (a *appender) takePartOf(k int) (int, *Error) {
	if len(a.reserved) == 0 {
		if err := a.take(k); err != nil {
			return 0, err
		}
	}
	num := a.reserved[0]
	a.reserved = a.reserved[1:]
	return num, nil
}

// claimOrTake returns the number of a part alone in what is left of its
// request, on a store whose parts have one writer process
// (storage.StagedClaimer): the number u names next, claimed from the
// store in memory, which the commit then saves past; no record write
// before the bytes. Two requests at one offset cannot both claim it; the
// one refused takes numbers past it by compare-and-swap (take), as every
// request on other stores does, which fences the claimer's writes out (a
// lower number); and of a claimer and a taker only the first to commit
// appends, as of two takers.
func (a *appender) claimOrTake(k int) (int, *Error) {
	if a.claim != nil && k == 1 && len(a.reserved) == 0 && a.claimed == 0 {
		num := max(a.u.NextPart, 1)
		if err := a.claim.ClaimStaged(a.ctx, a.u.Staged, num); err == nil {
			a.claimed = num
			return num, nil
		}
	}
	return a.takePartOf(k)
}

// take takes k part numbers by compare-and-swap of u. On a store with
// claims the number u names next is left to a claim (claimOrTake).
func (a *appender) take(k int) *Error {
	u := a.u
	first, taker := max(u.NextPart, 1), u.Taker
	if a.claim != nil {
		first++
	}
	u.NextPart, u.Taker = first+k, rand.Text()
	if err := a.h.save(a.ctx, u); err != nil {
		cur, lerr := a.h.load(a.ctx, u.ID)
		if !errors.Is(err, storage.ErrPreconditionFailed) || lerr != nil || cur.Taker != u.Taker {
			u.NextPart, u.Taker = first, taker
			if errors.Is(err, storage.ErrPreconditionFailed) && u.cached {
				return a.retake(k, cur, lerr)
			}
			if errors.Is(err, storage.ErrPreconditionFailed) {
				return overtaken()
			}
			return internal(err)
		}
		u.version = cur.version // landed; the answer was lost
	}
	for i := range k {
		a.reserved = append(a.reserved, first+i)
	}
	return nil
}

// retake takes k part numbers again after a take from this node's copy of
// u's record (recentUploads) met another version: the copy was stale.
// When the record read since (cur, or the failure lerr) holds the same
// bytes as the copy, the take is done again from it, as if the request
// had read it first; otherwise another request appended first (409), or
// the upload is gone (404).
func (a *appender) retake(k int, cur *Upload, lerr error) *Error {
	u := a.u
	u.cached = false
	switch {
	case errors.Is(lerr, storage.ErrNotFound):
		return refuse(http.StatusNotFound, "not_found", "no such upload")
	case lerr != nil:
		return internal(lerr)
	case cur.Offset != u.Offset || cur.Length != u.Length || cur.Staged != u.Staged || cur.Done || cur.Expired ||
		len(cur.Segments) != len(u.Segments) || !bytes.Equal(cur.Hash, u.Hash):
		return overtaken()
	}
	u.NextPart, u.Taker, u.Expires, u.Rev, u.version = cur.NextPart, cur.Taker, cur.Expires, cur.Rev, cur.version
	return a.take(k)
}

// verify checks the checksum, if any, and commits what is pending.
func (a *appender) verify() *Error {
	if a.sum != nil && !bytes.Equal(a.hash.Sum(nil), a.sum.Digest) {
		a.discard()
		return refuse(460, "checksum_mismatch", "the body does not match Upload-Checksum; nothing was appended")
	}
	return a.commit()
}

// commit names the pending segments in u's record (compare-and-swap),
// with a staged upload's SHA-256 state and first bytes.
func (a *appender) commit() *Error {
	if len(a.pending) == 0 {
		return nil
	}
	u := a.u
	old := *u
	base := old.Segments
	if a.replace {
		base = base[:len(base)-1]
	}
	u.Segments = append(base[:len(base):len(base)], a.pending...)
	u.Offset += a.staged
	u.NextPart = max(u.NextPart, a.claimed+1)
	u.Expires = a.h.Now().Add(a.h.TTL)
	if a.obj != nil {
		u.Hash, u.Head = a.hashState(u.Offset), a.head
	}
	if err := a.h.save(a.ctx, u); err != nil && !a.landed(err) {
		u.Segments, u.Offset, u.Expires, u.Hash, u.Head = old.Segments, old.Offset, old.Expires, old.Hash, old.Head
		u.NextPart = old.NextPart
		a.discard()
		if errors.Is(err, storage.ErrPreconditionFailed) {
			return overtaken()
		}
		return internal(err)
	}
	if a.replace {
		_ = a.h.dropSegments(a.ctx, old.Segments[len(old.Segments)-1:])
	}
	a.added += a.staged
	a.pending, a.staged, a.replace = nil, 0, false
	return nil
}

// landed reports whether a write of u's record that failed as a lost
// race did land: a client that retries a conditional PUT whose answer was
// lost (minio-go retries on network errors and 5xx) meets its own write as
// the precondition failure. The record then names the pending segments;
// u takes the record's version.
func (a *appender) landed(err error) bool {
	if !errors.Is(err, storage.ErrPreconditionFailed) {
		return false
	}
	cur, lerr := a.h.load(a.ctx, a.u.ID)
	if lerr != nil || len(cur.Segments) == 0 || !sameSegment(cur.Segments[len(cur.Segments)-1], a.pending[len(a.pending)-1]) {
		return false
	}
	a.u.version = cur.version
	return true
}

func sameSegment(x, y Segment) bool {
	if x.Part != nil || y.Part != nil {
		return x.Part != nil && y.Part != nil && *x.Part == *y.Part
	}
	return x.Name == y.Name
}

// discard deletes the segment records written and not committed (parts
// not named are garbage: overwritten by the next writer or aborted).
func (a *appender) discard() {
	_ = a.h.dropSegments(a.ctx, a.pending)
	a.pending, a.staged = nil, 0
}
