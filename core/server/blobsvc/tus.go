package blobsvc

import (
	"context"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/linktus"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/resumable"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/core/token"
)

// newResumable returns the resumable-upload endpoint (package resumable).
func (s *Server) newResumable() *resumable.Server {
	return resumable.New(resumable.Env{Backend: s.env.Backend, Gate: s.gate, MaxUpload: s.maxUpload(),
		StoreFor: s.storeFor, Logger: s.log, InvalidKey: invalidKeyMessage, Filename: filenameMessage,
		Conflict: conflictMessage, NoSpace: msgNoSpace, AlsoSweep: s.blobs.SweepFiles, Now: s.env.Now,
		Changed: func(id auth.Identity, key string) { s.blobs.Changed(s.gate.Tenancy.Raw(id, key)) },
		Values:  func(ctx *fasthttp.RequestCtx) context.Context { return telemetry.Of(ctx).Context() }})
}

// newLinkTus returns tus on the upload endpoints (package linktus), with
// the whole-body upload's checks, claim, errors and signals (upload.go).
func (s *Server) newLinkTus() *linktus.Server {
	return linktus.New(linktus.Env{Backend: s.env.Backend, Gate: s.gate, MaxUpload: s.maxUpload(), Logger: s.log,
		Claims: func(ctx *fasthttp.RequestCtx, tok string) (token.Claims, bool) {
			c, _, ok := s.uploadClaims(ctx, tok)
			return c, ok
		},
		Reserve:  s.reserveUpload,
		Release:  func(c token.Claims) { s.facts.Release(onetime.Uploads, c.Nonce, c.Expires) },
		Progress: s.blobs.UploadProgress, Done: s.blobs.UploadDone,
		Check: s.blobs.CheckLinkFile, Created: s.blobs.LinkTusStarted, // SEP-2631 files' links
		ErrorOf: func(err error, maxSize int64) (int, string, string) {
			e := (&upload{max: maxSize}).uploadErrorOf(err)
			return e.status, e.code, e.msg
		}})
}

// tusRoute routes /v1/tus and /v1/tus/{id} to package resumable.
func (s *Server) tusRoute(ctx *fasthttp.RequestCtx, raw, method string, id auth.Identity) (controlEndpoint, bool) {
	upload := strings.TrimPrefix(strings.TrimPrefix(raw, "/v1/tus"), "/")
	return controlEndpoint{run: func() { s.tus.Serve(ctx, upload, id) }, scope: resumable.Scope(method)}, true
}

// SweepUploads removes expired resumable uploads until ctx ends.
func (s *Server) SweepUploads(ctx context.Context) { s.tus.Sweep(ctx) }

// SweepUploadsOnce removes expired resumable uploads now.
func (s *Server) SweepUploadsOnce(ctx context.Context) { s.tus.SweepOnce(ctx) }
