package resumable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
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
	// Values, when set, is a request's values (its telemetry Record: the
	// request id and trace) for the storage calls it makes; nil: none.
	Values func(*fasthttp.RequestCtx) context.Context
	Logger *slog.Logger
	// The control API's phrases for refused keys, filenames and paths.
	InvalidKey func(key string, err error) string
	Filename   func(err error) string
	Conflict   func(err error) string
	NoSpace    string
	// AlsoSweep runs in each of Sweep's rounds this node sweeps (the file
	// records' sweep); nil for none.
	AlsoSweep func(ctx context.Context) (int, error)
	// Now is the uploads' clock (their Upload-Expires); nil is time.Now.
	Now func() time.Time
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
		cfg := tus.Config{Records: rec, Base: Base, MaxSize: env.MaxUpload,
			Admit: s.tusAdmit, Complete: s.tusComplete, Now: env.Now}
		if st := storage.StagerOf(env.Backend); st != nil {
			cfg.Stager, cfg.Begin = st, s.tusBegin
		}
		s.tus = tus.New(cfg)
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
	base := context.Background()
	if s.env.Values != nil {
		base = s.env.Values(ctx)
	}
	resp := s.tus.Serve(context.WithValue(base, tusIdentity{}, id), req)
	Write(ctx, s.log, resp, req.Body)
}

// tusAdmit checks a new upload's blob name, media type and filename; a
// partial upload of a concatenation names none (its final upload does).
func (s *Server) tusAdmit(u *tus.Upload) *tus.Error {
	key := tusKey(u)
	if u.Partial {
		return nil
	}
	if err := tusExpiry(u); err != nil {
		return err
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

// tusSpec is what a tus upload's object must satisfy, as PUT /v1/blobs's.
func (s *Server) tusSpec(u *tus.Upload) ingest.Spec {
	return ingest.Spec{Key: tusKey(u), MediaType: tusMediaType(u), Filename: u.Metadata["filename"], Size: max(u.Length, 0),
		MaxSize: s.env.MaxUpload, AllowEmpty: true, NoSniff: true, Expires: ExpiryOf(u)}
}

// tusBegin starts a new upload's staged write in the caller's view of the
// store, with ingest's checks; "" (bytes kept in records) when the view
// has no staged writes.
func (s *Server) tusBegin(ctx context.Context, u *tus.Upload) (string, *tus.Error) {
	id, _ := ctx.Value(tusIdentity{}).(auth.Identity)
	st := storage.StagerOf(s.env.StoreFor(id))
	if st == nil {
		return "", nil
	}
	staged, err := ingest.BeginStaged(ctx, st, s.tusSpec(u))
	if err != nil {
		return "", s.tusStorageError(tusKey(u), err)
	}
	return staged, nil
}

// tusComplete stores a complete upload through storage/ingest, as PUT
// /v1/blobs does, in the caller's view of the store: a staged upload by
// committing its staged write (no byte copied), one kept in records by
// writing its bytes.
func (s *Server) tusComplete(ctx context.Context, u *tus.Upload, data tus.Data) (string, *tus.Error) {
	id, _ := ctx.Value(tusIdentity{}).(auth.Identity)
	view, spec := s.env.StoreFor(id), s.tusSpec(u)
	var err error
	if data.Staged == "" {
		_, err = ingest.Store(ctx, view, spec, data.Reader)
	} else {
		err = s.commitStaged(ctx, view, spec, data)
	}
	if err != nil {
		return "", s.tusStorageError(spec.Key, err)
	}
	s.env.Changed(id, spec.Key)
	return spec.Key, nil
}

// commitStaged commits a staged upload. A staged write already gone
// whose object is there with the upload's size and SHA-256 was committed
// by a completion that stopped before recording it (a crash, or another
// node): done.
func (s *Server) commitStaged(ctx context.Context, view storage.Backend, spec ingest.Spec, data tus.Data) error {
	st := storage.StagerOf(view)
	if st == nil {
		return errors.New("resumable: the store has no staged writes")
	}
	staged := ingest.Staged{ID: data.Staged, Parts: data.Parts, SHA256: data.SHA256, Head: data.Head}
	_, err := ingest.CommitStaged(ctx, st, spec, staged)
	if errors.Is(err, storage.ErrStagedGone) {
		info, serr := view.Stat(ctx, spec.Key)
		if serr == nil && info.SHA256 == data.SHA256 && info.Size == storage.StagedSize(data.Parts) {
			return nil
		}
	}
	return err
}

// tusStorageError maps a failed completion as apiStorageError maps a PUT's.
func (s *Server) tusStorageError(key string, err error) *tus.Error {
	e := &tus.Error{Err: err}
	switch {
	case errors.Is(err, storage.ErrQuotaExceeded): // wire.Write adds the figures
		e.Status, e.Code, e.Message = http.StatusForbidden, "quota_exceeded", "quota exceeded"
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
// onetime.SweepEvery, until ctx ends. On a store with claims one node
// sweeps per round (sweepTurn); sweeping on many at once is safe too
// (tus.Handler.Sweep), only wasted.
func (s *Server) Sweep(ctx context.Context) {
	if s.tus == nil {
		return
	}
	t := time.NewTicker(onetime.SweepEvery)
	defer t.Stop()
	for {
		if s.sweepTurn(ctx, time.Now()) {
			s.SweepOnce(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepOnce removes the expired resumable uploads (and, with
// Env.AlsoSweep, the file records) now, whoever's round it is.
func (s *Server) SweepOnce(ctx context.Context) {
	if s.tus == nil {
		return
	}
	if n, err := s.tus.Sweep(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("server: sweeping expired uploads failed", "err", err)
	} else if n > 0 {
		s.log.Debug("server: swept expired uploads", "removed", n)
	}
	if s.env.AlsoSweep != nil {
		if n, err := s.env.AlsoSweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("server: sweeping expired records failed", "err", err)
		} else if n > 0 {
			s.log.Debug("server: swept expired records", "removed", n)
		}
	}
}

// SweepSet is the claim set of the sweep rounds: one claim per round of
// onetime.SweepEvery, in the store beside the links' claims.
const SweepSet = "tus-sweep"

// sweepTurn reports whether this node sweeps the round of now (rounds of
// onetime.SweepEvery): the node whose claim of the round lands first, on
// a store with claims; every node otherwise, or when claiming fails (a
// sweep on several nodes is safe). The winner removes the claims of
// rounds past.
func (s *Server) sweepTurn(ctx context.Context, now time.Time) bool {
	c, ok := s.env.Backend.(storage.Claimer)
	if !ok {
		return true
	}
	round := now.Truncate(onetime.SweepEvery)
	claim := storage.Claim{Set: SweepSet, Name: "round-" + strconv.FormatInt(round.Unix(), 10),
		Expires: round.Add(2 * onetime.SweepEvery)}
	switch err := c.Claim(ctx, claim); {
	case errors.Is(err, storage.ErrExists):
		return false
	case err == nil:
		_, _ = c.SweepClaims(ctx, SweepSet, now)
	}
	return true
}
