package tus

import (
	"context"
	"errors"
	"io"

	"github.com/mcpblob/mcpblob/storage"
)

// finish hands a complete upload's bytes to Complete, records the result,
// and deletes the segments (and a final upload's partial uploads). Complete
// refusing the bytes (a 4xx) removes the upload; a server fault (5xx)
// keeps it, complete, and the next HEAD or PATCH tries again. Two nodes
// finishing one upload at once (a HEAD after a crash) both store the same
// bytes under the same key; one records it.
func (h *Handler) finish(ctx context.Context, u *Upload) *Error {
	if h.Complete == nil {
		return internal(errors.New("tus: no Complete"))
	}
	wctx := context.WithoutCancel(ctx)
	result, cerr := h.Complete(wctx, u, &segmentReader{ctx: wctx, rec: h.rec, segs: u.Segments})
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
