package tus

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"net/http"
	"sync"

	"github.com/mcpblob/mcpblob/storage"
)

// patchType is the Content-Type of a PATCH body.
const patchType = "application/offset+octet-stream"

// patch serves PATCH: the body's bytes are appended at Upload-Offset,
// which must be the upload's offset.
func (h *Handler) patch(ctx context.Context, req Request, resp *Response) *Error {
	if req.Header("Content-Type") != patchType {
		return refuse(http.StatusUnsupportedMediaType, "bad_content_type", "a PATCH body must be Content-Type: "+patchType)
	}
	off, ok := ParseSize(req.Header("Upload-Offset"))
	if !ok {
		return refuse(http.StatusBadRequest, "bad_offset", "Upload-Offset must be a non-negative decimal integer")
	}
	u := h.cachedFor(req, off)
	if u == nil {
		var err *Error
		if u, err = h.lookup(ctx, req); err != nil {
			return err
		}
	}
	switch {
	case u.Final():
		return refuse(http.StatusForbidden, "final_upload", "a final upload of a concatenation takes no PATCH")
	case off != u.Offset:
		return offsetConflict(u.Offset)
	}
	if err := h.deferredLength(req, u); err != nil {
		return err
	}
	if err := h.write(ctx, u, req); err != nil {
		h.recent.drop(u.ID)
		return err
	}
	h.remember(u)
	h.describe(u, resp)
	resp.Status = http.StatusNoContent
	return nil
}

func offsetConflict(have int64) *Error {
	return refuse(http.StatusConflict, "offset_mismatch",
		fmt.Sprintf("Upload-Offset does not match the upload's offset %d; HEAD the upload and resume from there", have))
}

// deferredLength takes Upload-Length on a PATCH of an upload whose length
// was deferred; it is saved with the PATCH's first bytes.
func (h *Handler) deferredLength(req Request, u *Upload) *Error {
	l := req.Header("Upload-Length")
	if l == "" {
		return nil
	}
	n, ok := ParseSize(l)
	switch {
	case !ok:
		return refuse(http.StatusBadRequest, "bad_length", "Upload-Length must be a non-negative decimal integer")
	case u.Length >= 0 && n != u.Length:
		return refuse(http.StatusBadRequest, "bad_length", "Upload-Length is already set and differs")
	case n < u.Offset:
		return refuse(http.StatusBadRequest, "bad_length", "Upload-Length is below the upload's offset")
	case n > h.MaxSize:
		return h.tooLarge(n)
	}
	u.Length = n
	return nil
}

// write appends the request body to u (whose offset the caller checked),
// then completes u when every byte arrived.
func (h *Handler) write(ctx context.Context, u *Upload, req Request) *Error {
	limit := h.MaxSize - u.Offset
	if u.Length >= 0 {
		limit = u.Length - u.Offset
	}
	if req.ContentLength > limit {
		return refuse(http.StatusRequestEntityTooLarge, "too_large",
			fmt.Sprintf("body of %d bytes is over the %d bytes the upload has left", req.ContentLength, limit))
	}
	a := &appender{h: h, u: u, ctx: context.WithoutCancel(ctx), hold: req.ContentLength < 0, expect: req.ContentLength}
	if c := req.Header("Upload-Checksum"); c != "" {
		sum, err := ParseChecksum(c)
		if err != nil {
			return refuse(http.StatusBadRequest, "bad_checksum", err.Error())
		}
		a.sum, a.hash, a.hold = &sum, newHash(sum.Algorithm), true
	}
	if err := a.run(req.Body, limit); err != nil {
		return err
	}
	if u.complete() && !u.Partial && !u.Done {
		return h.finish(ctx, u)
	}
	if u.Length >= 0 || a.added > 0 {
		return nil
	}
	return h.saveLength(a.ctx, u)
}

// saveLength saves a deferred length that came with an empty PATCH.
func (h *Handler) saveLength(ctx context.Context, u *Upload) *Error {
	if err := h.save(ctx, u); errors.Is(err, storage.ErrPreconditionFailed) {
		return offsetConflict(u.Offset)
	} else if err != nil {
		return internal(err)
	}
	return nil
}

func newHash(alg string) hash.Hash {
	switch alg {
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	}
	return crc32.New(crc32.MakeTable(crc32.Castagnoli))
}

// buffers recycles segment buffers between PATCHes, per size.
var buffers sync.Map // int → *sync.Pool of *[]byte

func getBuffer(size int) *[]byte {
	p, _ := buffers.LoadOrStore(size, &sync.Pool{New: func() any { b := make([]byte, size); return &b }})
	return p.(*sync.Pool).Get().(*[]byte)
}

func putBuffer(b *[]byte) {
	if p, ok := buffers.Load(len(*b)); ok {
		p.(*sync.Pool).Put(b)
	}
}
