package tus

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strconv"
)

// create serves POST Base: creation, creation-defer-length,
// creation-with-upload, and the final upload of a concatenation.
func (h *Handler) create(ctx context.Context, req Request, resp *Response) *Error {
	u, err := h.newUpload(req)
	if err != nil {
		return err
	}
	if c := req.Header("Upload-Concat"); c != "" {
		partial, ids, perr := ParseConcat(c, h.Base)
		if perr != nil {
			return refuse(http.StatusBadRequest, "bad_concat", perr.Error())
		}
		if !partial {
			return h.createFinal(ctx, req, u, ids, resp)
		}
		u.Partial = true
	}
	if err := h.sizeUpload(req, u); err != nil {
		return err
	}
	if h.Admit != nil {
		if err := h.Admit(u); err != nil {
			return err
		}
	}
	if err := h.begin(ctx, u); err != nil {
		return err
	}
	if err := h.save(ctx, u); err != nil {
		h.abortStaged(ctx, u)
		return internal(err)
	}
	resp.set("Location", h.Base+u.ID)
	resp.Status = http.StatusCreated
	if req.ContentLength != 0 && req.Header("Content-Type") == patchType {
		// creation-with-upload: the body is the first PATCH.
		if err := h.write(ctx, u, req); err != nil {
			return err
		}
	} else if u.complete() && !u.Partial {
		// An upload of length 0 is complete once created: no PATCH will
		// come to finish it.
		if err := h.finish(ctx, u); err != nil {
			return err
		}
	}
	h.describe(u, resp)
	return nil
}

// newUpload starts an upload of the caller with the request's metadata.
func (h *Handler) newUpload(req Request) (*Upload, *Error) {
	raw := req.Header("Upload-Metadata")
	md, err := ParseMetadata(raw)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "bad_metadata", err.Error())
	}
	return &Upload{
		ID: rand.Text(), Owner: req.Principal, Length: -1, Metadata: md, RawMetadata: raw,
		Expires: h.Now().Add(h.TTL),
	}, nil
}

// sizeUpload reads Upload-Length or Upload-Defer-Length (exactly one).
func (h *Handler) sizeUpload(req Request, u *Upload) *Error {
	l, d := req.Header("Upload-Length"), req.Header("Upload-Defer-Length")
	switch {
	case l != "" && d != "", l == "" && d == "":
		return refuse(http.StatusBadRequest, "bad_length", "send exactly one of Upload-Length and Upload-Defer-Length")
	case d != "":
		if d != "1" {
			return refuse(http.StatusBadRequest, "bad_length", "Upload-Defer-Length must be 1")
		}
		return nil
	}
	n, ok := ParseSize(l)
	if !ok {
		return refuse(http.StatusBadRequest, "bad_length", "Upload-Length must be a non-negative decimal integer")
	}
	if n > h.MaxSize {
		return h.tooLarge(n)
	}
	u.Length = n
	return nil
}

func (h *Handler) tooLarge(n int64) *Error {
	return refuse(http.StatusRequestEntityTooLarge, "too_large",
		fmt.Sprintf("upload of %d bytes is over Tus-Max-Size %d", n, h.MaxSize))
}

// createFinal concatenates the caller's complete partial uploads, in
// order, into u, and completes it at once.
func (h *Handler) createFinal(ctx context.Context, req Request, u *Upload, ids []string, resp *Response) *Error {
	var total int64
	for _, id := range ids {
		p, err := h.lookup(ctx, Request{ID: id, Principal: req.Principal})
		if err != nil && err.Status == http.StatusNotFound {
			return refuse(http.StatusForbidden, "bad_concat", "Upload-Concat names an upload that is not one of yours: "+id)
		} else if err != nil {
			return err
		}
		if !p.Partial || !p.complete() {
			return refuse(http.StatusBadRequest, "bad_concat", "Upload-Concat names an upload that is not a complete partial upload: "+id)
		}
		total += p.Length
		u.Segments = append(u.Segments, p.Segments...)
	}
	if total > h.MaxSize {
		return h.tooLarge(total)
	}
	u.Parts, u.Length, u.Offset = ids, total, total
	if h.Admit != nil {
		if err := h.Admit(u); err != nil {
			return err
		}
	}
	if err := h.save(ctx, u); err != nil {
		return internal(err)
	}
	if err := h.finish(ctx, u); err != nil {
		return err
	}
	resp.set("Location", h.Base+u.ID)
	resp.set("Upload-Offset", strconv.FormatInt(u.Offset, 10))
	resp.Status = http.StatusCreated
	return nil
}

// begin starts u's staged write when the store has them and u names its
// object (not a partial upload).
func (h *Handler) begin(ctx context.Context, u *Upload) *Error {
	if h.Stager == nil || h.Begin == nil || u.Partial {
		return nil
	}
	id, err := h.Begin(context.WithoutCancel(ctx), u)
	if err != nil {
		return err
	}
	u.Staged = id
	return nil
}

// abortStaged removes u's staged write, which no record names.
func (h *Handler) abortStaged(ctx context.Context, u *Upload) {
	if u.Staged != "" {
		_ = h.Stager.AbortStaged(context.WithoutCancel(ctx), u.Staged)
	}
}
