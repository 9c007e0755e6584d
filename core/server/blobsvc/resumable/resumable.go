package resumable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/tus"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// Base is the creation endpoint; an upload's URL is Base + id.
const Base = "/v1/tus/"

// Env is what the endpoint works with, given by package blobsvc.
type Env struct {
	Backend   storage.Backend // the whole store: its records hold the uploads
	Gate      *gate.Gate
	MaxUpload int64 // Tus-Max-Size, PUT /v1/blobs's limit
	// StoreFor is the store as a caller sees it (its tenancy view).
	StoreFor func(auth.Identity) storage.Backend
	// Changed reports a blob stored (change notifications).
	Changed func(id auth.Identity, key string)
	Logger  *slog.Logger
	// The control API's phrases for refused keys, filenames and paths.
	InvalidKey func(key string, err error) string
	Filename   func(err error) string
	Conflict   func(err error) string
	NoSpace    string
}

// Server serves the endpoint.
type Server struct {
	env Env
	log *slog.Logger
	tus *tus.Handler // nil when the store keeps no records
}

// New returns the endpoint on env's store; it answers 501 when the store
// keeps no records.
func New(env Env) *Server {
	s := &Server{env: env, log: env.Logger}
	if rec := storage.RecorderOf(env.Backend); rec != nil {
		s.tus = tus.New(tus.Config{Records: rec, Base: Base, MaxSize: env.MaxUpload,
			Admit: s.tusAdmit, Complete: s.tusComplete})
	}
	return s
}

// Scope is the scope a method needs: OPTIONS and HEAD read, the rest write.
func Scope(method string) string {
	if method == http.MethodOptions || method == http.MethodHead {
		return auth.ScopeRead
	}
	return auth.ScopeWrite
}

// tusIdentity carries the caller to Complete, through the context.
type tusIdentity struct{}

// Serve answers a request for /v1/tus (upload "") or /v1/tus/{upload} of
// the authenticated caller id.
func (s *Server) Serve(ctx *fasthttp.RequestCtx, upload string, id auth.Identity) {
	if s.tus == nil {
		gate.APIError(ctx, http.StatusNotImplemented, "not_implemented", "this store keeps no upload state; resumable uploads are off")
		return
	}
	method := string(ctx.Method())
	if method == http.MethodPatch || method == http.MethodPost {
		release, refused := s.env.Gate.TakeUploadSlot(id.Principal)
		if refused != nil {
			s.env.Gate.Refuse(ctx, refused)
			return
		}
		defer release()
	}
	req := NewRequest(ctx, s.env.Gate, upload, id.Principal)
	resp := s.tus.Serve(context.WithValue(context.Background(), tusIdentity{}, id), req)
	Write(ctx, s.log, resp)
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
			Message: "Upload-Metadata must name the blob with \"key\" (or \"filename\"): " + s.env.InvalidKey(key, err)}
	}
	if mt := tusMediaType(u); mt != "" {
		if _, _, err := mime.ParseMediaType(mt); err != nil || len(mt) > storage.MaxMediaTypeLen {
			return &tus.Error{Status: http.StatusBadRequest, Code: "bad_metadata",
				Message: fmt.Sprintf("Upload-Metadata filetype: malformed, or over %d bytes", storage.MaxMediaTypeLen)}
		}
	}
	if err := storage.ValidateFilename(u.Metadata["filename"]); err != nil {
		return &tus.Error{Status: http.StatusBadRequest, Code: "invalid_filename", Message: s.env.Filename(err)}
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
		MaxSize: s.env.MaxUpload, AllowEmpty: true, NoSniff: true}
	if _, err := ingest.Store(ctx, s.env.StoreFor(id), spec, data); err != nil {
		return "", s.tusStorageError(key, err)
	}
	s.env.Changed(id, key)
	return key, nil
}

// tusStorageError maps a failed completion as apiStorageError maps a PUT's.
func (s *Server) tusStorageError(key string, err error) *tus.Error {
	e := &tus.Error{Err: err}
	switch {
	case errors.Is(err, storage.ErrInvalidKey):
		e.Status, e.Code, e.Message = http.StatusBadRequest, "invalid_key", s.env.InvalidKey(key, err)
	case errors.Is(err, storage.ErrPathConflict):
		e.Status, e.Code, e.Message = http.StatusConflict, "path_conflict", s.env.Conflict(err)
	case errors.Is(err, storage.ErrTooLarge), errors.Is(err, ingest.ErrTooLarge):
		e.Status, e.Code, e.Message = http.StatusRequestEntityTooLarge, "too_large", "upload over the upload limit"
	case errors.Is(err, storage.ErrInsufficientStorage):
		e.Status, e.Code, e.Message = http.StatusInsufficientStorage, "insufficient_storage", s.env.NoSpace
	default:
		e.Status, e.Code, e.Message = http.StatusInternalServerError, "internal", "internal error"
	}
	return e
}

// Sweep removes expired resumable uploads now, then again every
// onetime.SweepEvery, until ctx ends; any number of nodes may sweep at once
// (tus.Handler.Sweep).
func (s *Server) Sweep(ctx context.Context) {
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
