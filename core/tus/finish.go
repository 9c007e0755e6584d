package tus

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
)

// Data is a complete upload's bytes, as Complete gets them: a staged
// write to commit (Staged), or records to read (Reader).
type Data struct {
	// Staged is the staged write holding the bytes (Upload.Staged), in
	// Parts; SHA256 is their hex digest and Head their first bytes (up to
	// HeadLen), kept as they arrived. Committing them writes nothing.
	Staged string
	Parts  []storage.StagedPart
	SHA256 string
	Head   []byte
	// Reader reads the bytes of an upload kept in records (Staged is
	// ""): a final upload of a concatenation, or one on a store without
	// staged writes.
	Reader io.Reader
}

// finish hands a complete upload's bytes to Complete, records the result,
// and deletes the segment records (and a final upload's partial uploads).
// Complete refusing the bytes (a 4xx) removes the upload; a server fault
// (5xx) keeps it, complete, and the next HEAD or PATCH tries again. Two
// nodes finishing one upload at once (a HEAD after a crash) both hand the
// same bytes to Complete for the same key; one records it.
func (h *Handler) finish(ctx context.Context, u *Upload) *Error {
	if h.Complete == nil {
		return internal(errors.New("tus: no Complete"))
	}
	wctx := context.WithoutCancel(ctx)
	data, derr := h.data(wctx, u)
	if derr != nil {
		return derr
	}
	result, cerr := h.Complete(wctx, u, data)
	if cerr != nil && cerr.Status >= 500 {
		return cerr
	}
	if cerr != nil {
		if u.Final() {
			_ = h.rec.DeleteRecord(wctx, h.infoName(u.ID)) // the segments are the partial uploads'
		} else {
			_ = h.remove(wctx, u)
		}
		return cerr
	}
	segs := u.Segments
	u.Done, u.Result, u.Segments = true, result, nil
	switch err := h.save(wctx, u); {
	case errors.Is(err, storage.ErrPreconditionFailed):
		return nil // another node finished it
	case err != nil:
		return internal(err)
	}
	_ = h.dropSegments(wctx, segs)
	for _, p := range u.Parts {
		_ = h.rec.DeleteRecord(wctx, h.infoName(p))
	}
	return nil
}

// data returns u's bytes for Complete. A staged upload whose last
// segment is a record (its length came after its last bytes) first writes
// that as its last part.
func (h *Handler) data(ctx context.Context, u *Upload) (Data, *Error) {
	if u.Staged == "" {
		return Data{Reader: &segmentReader{ctx: ctx, rec: h.rec, segs: u.Segments}}, nil
	}
	if n := len(u.Segments); n > 0 && u.Segments[n-1].Part == nil {
		a := &appender{h: h, u: u, ctx: ctx, expect: 0}
		if err := a.run(strings.NewReader(""), 0); err != nil {
			return Data{}, err
		}
	}
	sum, err := h.objHash(ctx, u)
	if err != nil {
		return Data{}, err
	}
	return Data{Staged: u.Staged, Parts: stagedParts(u.Segments), SHA256: hex.EncodeToString(sum.Sum(nil)), Head: u.Head}, nil
}

// segmentReader reads segments in order, one in memory at a time.
type segmentReader struct {
	ctx  context.Context
	rec  storage.Recorder
	segs []Segment
	cur  []byte
}

func (r *segmentReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if len(r.segs) == 0 {
			return 0, io.EOF
		}
		data, _, err := r.rec.GetRecord(r.ctx, r.segs[0].Name)
		if err != nil {
			return 0, err
		}
		if int64(len(data)) != r.segs[0].Size {
			return 0, errors.New("tus: a segment's size differs from its record")
		}
		r.cur, r.segs = data, r.segs[1:]
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}
