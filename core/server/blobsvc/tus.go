package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/tus"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// Resumable uploads on the control API (docs/uploads.md): tus 1.0.0 at
// /v1/tus/ through package core/tus, with the credentials, scopes, upload
// slots, body rate rule and size limit of PUT /v1/blobs. Upload-Metadata
// names the blob: "key" (or, without it, "filename"), "filetype" or
// "contentType" its media type, "filename" its filename. The complete
// upload is stored under the key through storage/ingest, as PUT stores it.

// tusBase is the creation endpoint; an upload's URL is tusBase + id.
const tusBase = "/v1/tus/"

// newTus returns the tus handler on the store's records, or nil when the
// store keeps none (the endpoint then answers 501).
func (s *Server) newTus() *tus.Handler {
	rec := storage.RecorderOf(s.env.Backend)
	if rec == nil {
		return nil
	}
	return tus.New(tus.Config{Records: rec, Base: tusBase, MaxSize: s.maxUpload(),
		Admit: s.tusAdmit, Complete: s.tusComplete})
}

// tusRoute routes /v1/tus and /v1/tus/{id}: writes need the write scope,
// OPTIONS and HEAD the read scope.
func (s *Server) tusRoute(ctx *fasthttp.RequestCtx, raw, method string, id auth.Identity) (controlEndpoint, bool) {
	upload := strings.TrimPrefix(strings.TrimPrefix(raw, "/v1/tus"), "/")
	scope := auth.ScopeWrite
	if method == http.MethodOptions || method == http.MethodHead {
		scope = auth.ScopeRead
	}
	return controlEndpoint{run: func() { s.serveTus(ctx, upload, id) }, scope: scope}, true
}

// tusIdentity carries the caller to Complete, through the context.
type tusIdentity struct{}

func (s *Server) serveTus(ctx *fasthttp.RequestCtx, upload string, id auth.Identity) {
	if s.tus == nil {
		gate.APIError(ctx, http.StatusNotImplemented, "not_implemented", "this store keeps no upload state; resumable uploads are off")
		return
	}
	method := string(ctx.Method())
	if method == http.MethodPatch || method == http.MethodPost {
		release, refused := s.gate.TakeUploadSlot(id.Principal)
		if refused != nil {
			s.gate.Refuse(ctx, refused)
			return
		}
		defer release()
	}
	hdr := &ctx.Request.Header
	req := tus.Request{Method: method, ID: upload, Principal: id.Principal,
		Header:        func(name string) string { return string(hdr.Peek(name)) },
		ContentLength: int64(max(hdr.ContentLength(), -1)), Body: s.gate.Paced(ctx)}
	if method == http.MethodHead || method == http.MethodOptions || method == http.MethodDelete {
		req.ContentLength, req.Body = 0, strings.NewReader("")
	}
	resp := s.tus.Serve(context.WithValue(context.Background(), tusIdentity{}, id), req)
	s.writeTus(ctx, resp)
}

func (s *Server) writeTus(ctx *fasthttp.RequestCtx, resp tus.Response) {
	for _, kv := range resp.Header {
		ctx.Response.Header.Set(kv[0], kv[1])
	}
	if resp.Error == nil {
		ctx.SetStatusCode(resp.Status)
		return
	}
	if resp.Error.Err != nil {
		s.log.Debug("server: tus", "status", resp.Status, "err", resp.Error.Err)
		if resp.Status >= 500 {
			s.log.Error("server: tus", "err", resp.Error.Err)
		}
	}
	if resp.Status < 500 && string(ctx.Method()) != http.MethodHead {
		ctx.SetConnectionClose() // the body may be unread
	}
	gate.APIError(ctx, resp.Status, resp.Code, resp.Message)
}

// tusAdmit checks a new upload's blob name, media type and filename; a
// partial upload of a concatenation names none (its final upload does).
func (s *Server) tusAdmit(u *tus.Upload) *tus.Error {
	key := tusKey(u)
	if u.Partial {
		return nil
	}
	if err := storage.ValidateKey(key); err != nil {
		return &tus.Error{Status: http.StatusBadRequest, Code: "invalid_key",
			Message: "Upload-Metadata must name the blob with \"key\" (or \"filename\"): " + invalidKeyMessage(key, err)}
	}
	if mt := tusMediaType(u); mt != "" {
		if _, _, err := mime.ParseMediaType(mt); err != nil || len(mt) > storage.MaxMediaTypeLen {
			return &tus.Error{Status: http.StatusBadRequest, Code: "bad_metadata",
				Message: fmt.Sprintf("Upload-Metadata filetype: malformed, or over %d bytes", storage.MaxMediaTypeLen)}
		}
	}
	if err := storage.ValidateFilename(u.Metadata["filename"]); err != nil {
		return &tus.Error{Status: http.StatusBadRequest, Code: "invalid_filename", Message: filenameMessage(err)}
	}
	return nil
}

func tusKey(u *tus.Upload) string {
	if k := u.Metadata["key"]; k != "" {
		return k
	}
	return u.Metadata["filename"]
}

func tusMediaType(u *tus.Upload) string {
	if mt := u.Metadata["filetype"]; mt != "" {
		return mt
	}
	return u.Metadata["contentType"]
}

// tusComplete stores a complete upload through storage/ingest, as PUT
// /v1/blobs does, in the caller's view of the store.
func (s *Server) tusComplete(ctx context.Context, u *tus.Upload, data io.Reader) (string, *tus.Error) {
	id, _ := ctx.Value(tusIdentity{}).(auth.Identity)
	key := tusKey(u)
	spec := ingest.Spec{Key: key, MediaType: tusMediaType(u), Filename: u.Metadata["filename"], Size: u.Length,
		MaxSize: s.maxUpload(), AllowEmpty: true, NoSniff: true}
	if _, err := ingest.Store(ctx, s.storeFor(id), spec, data); err != nil {
		return "", s.tusStorageError(key, err)
	}
	s.blobs.Changed(s.gate.Tenancy.Raw(id, key))
	return key, nil
}

// tusStorageError maps a failed completion as apiStorageError maps a PUT's.
func (s *Server) tusStorageError(key string, err error) *tus.Error {
	e := &tus.Error{Err: err}
	switch {
	case errors.Is(err, storage.ErrInvalidKey):
		e.Status, e.Code, e.Message = http.StatusBadRequest, "invalid_key", invalidKeyMessage(key, err)
	case errors.Is(err, storage.ErrPathConflict):
		e.Status, e.Code, e.Message = http.StatusConflict, "path_conflict", conflictMessage(err)
	case errors.Is(err, storage.ErrTooLarge), errors.Is(err, ingest.ErrTooLarge):
		e.Status, e.Code, e.Message = http.StatusRequestEntityTooLarge, "too_large", "upload over the upload limit"
	case errors.Is(err, storage.ErrInsufficientStorage):
		e.Status, e.Code, e.Message = http.StatusInsufficientStorage, "insufficient_storage", msgNoSpace
	default:
		e.Status, e.Code, e.Message = http.StatusInternalServerError, "internal", "internal error"
	}
	return e
}

// SweepUploads removes expired resumable uploads now, then again every
// onetime.SweepEvery, until ctx ends; any number of nodes may sweep at once
// (tus.Handler.Sweep).
func (s *Server) SweepUploads(ctx context.Context) {
	if s.tus == nil {
		return
	}
	t := time.NewTicker(onetime.SweepEvery)
	defer t.Stop()
	for {
		if n, err := s.tus.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("server: sweeping expired uploads failed", "err", err)
		} else if n > 0 {
			s.log.Debug("server: swept expired uploads", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
