package tus

import (
	"bytes"
	"context"
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
// commit does; the other gets 409 and its segments are deleted.
//
// A segment is at most SegmentSize bytes, held in one buffer: the memory
// of a PATCH, whatever the upload's size. A short last segment (the end of
// a small PATCH, or of a cut one) is read back by the next PATCH and
// replaced by a segment holding it and the new bytes, as tusd's S3 store
// merges an incomplete part into the next, so segments stay few.
//
// With a Content-Length and no Upload-Checksum each full segment is
// committed as it is written. With Upload-Checksum, segments are committed
// together once the digest matched, and none otherwise (460); without a
// Content-Length, once the body ended within the upload's length, and none
// when it runs past (413). A body cut short keeps what arrived, unless a
// checksum was to cover it.
type appender struct {
	h     *Handler
	u     *Upload
	ctx   context.Context
	sum   *Checksum
	hash  hash.Hash
	added int64 // bytes committed
	hold  bool  // commit only once the body ended

	buf     []byte
	n       int       // bytes in buf
	tail    int       // of them, the merged last segment's
	replace bool      // the next commit replaces u's last segment
	pending []Segment // written, not yet committed (checksum)
	staged  int64     // new bytes in pending
}

func (a *appender) run(body io.Reader, limit int64) *Error {
	b := getBuffer(a.h.SegmentSize)
	defer putBuffer(b)
	a.buf = *b
	if err := a.mergeTail(); err != nil {
		return err
	}
	r := io.LimitReader(body, limit+1)
	var got int64
	for {
		k, rerr := io.ReadFull(r, a.buf[a.n:])
		if a.hash != nil {
			a.hash.Write(a.buf[a.n : a.n+k])
		}
		a.n, got = a.n+k, got+int64(k)
		if got > limit {
			a.discard()
			return refuse(http.StatusRequestEntityTooLarge, "too_large", "the body runs past the upload's length or Tus-Max-Size")
		}
		ended := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		cut := rerr != nil && !ended
		if err := a.flush(a.n == len(a.buf) || ended || cut && a.sum == nil); err != nil {
			return err
		}
		switch {
		case cut:
			if a.sum == nil {
				if err := a.commit(); err != nil {
					return err
				}
			}
			a.discard()
			return &Error{Status: http.StatusBadRequest, Code: "bad_request",
				Message: "reading the body failed; the bytes before are kept, HEAD the upload to resume", Err: rerr}
		case ended:
			return a.verify()
		}
	}
}

// mergeTail loads u's last segment into the buffer when it is short.
func (a *appender) mergeTail() *Error {
	segs := a.u.Segments
	if len(segs) == 0 || segs[len(segs)-1].Size >= int64(a.h.SegmentSize) {
		return nil
	}
	data, _, err := a.h.rec.GetRecord(a.ctx, segs[len(segs)-1].Name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		// Another request replaced the segment since u was read: u is stale.
		return refuse(http.StatusConflict, "offset_mismatch", "another request appended to the upload first; HEAD the upload and resume from its offset")
	case err != nil:
		return internal(err)
	}
	a.n = copy(a.buf, data)
	a.tail, a.replace = a.n, true
	return nil
}

// flush writes the buffer's new bytes as a segment when now is set, and
// commits it unless a checksum is pending.
func (a *appender) flush(now bool) *Error {
	fresh := int64(a.n - a.tail)
	if !now || fresh == 0 {
		return nil
	}
	seg := Segment{Name: a.h.segmentName(a.u.ID), Size: int64(a.n)}
	if _, err := a.h.rec.PutRecord(a.ctx, seg.Name, a.buf[:a.n], ""); err != nil {
		a.discard()
		return internal(err)
	}
	a.pending, a.staged = append(a.pending, seg), a.staged+fresh
	a.n, a.tail = 0, 0
	if a.hold {
		return nil
	}
	return a.commit()
}

// verify checks the checksum, if any, and commits what is pending.
func (a *appender) verify() *Error {
	if a.sum != nil && !bytes.Equal(a.hash.Sum(nil), a.sum.Digest) {
		a.discard()
		return refuse(460, "checksum_mismatch", "the body does not match Upload-Checksum; nothing was appended")
	}
	return a.commit()
}

// commit names the pending segments in u's record (compare-and-swap).
func (a *appender) commit() *Error {
	if len(a.pending) == 0 {
		return nil
	}
	u := a.u
	old, oldOffset, oldExpires := u.Segments, u.Offset, u.Expires
	base := old
	if a.replace {
		base = old[:len(old)-1]
	}
	u.Segments = append(base[:len(base):len(base)], a.pending...)
	u.Offset += a.staged
	u.Expires = a.h.Now().Add(a.h.TTL)
	if err := a.h.save(a.ctx, u); err != nil && !a.landed(err) {
		u.Segments, u.Offset, u.Expires = old, oldOffset, oldExpires
		a.discard()
		if errors.Is(err, storage.ErrPreconditionFailed) {
			return refuse(http.StatusConflict, "offset_mismatch", "another request appended to the upload first; HEAD the upload and resume from its offset")
		}
		return internal(err)
	}
	if a.replace {
		_ = a.h.dropSegments(a.ctx, old[len(old)-1:])
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
	if lerr != nil || len(cur.Segments) == 0 || cur.Segments[len(cur.Segments)-1].Name != a.pending[len(a.pending)-1].Name {
		return false
	}
	a.u.version = cur.version
	return true
}

// discard deletes the segments written and not committed.
func (a *appender) discard() {
	_ = a.h.dropSegments(a.ctx, a.pending)
	a.pending, a.staged = nil, 0
}
