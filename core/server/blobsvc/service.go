package blobsvc

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/linktus"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/resumable"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/uploadpage"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/onetime"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// Options tune the blob service. The zero value of every field is the
// documented default.
type Options struct {
	// LinksNeedCredential makes download links also require the minting
	// principal's credential (SEP-2532: fetched with the MCP session's
	// authorization); default false: a link is its own capability.
	LinksNeedCredential bool
	// DownloadRedirect makes /d/{token} answer 302 to a presigned URL when
	// the backend presigns (S3); default false: /d streams the bytes itself.
	DownloadRedirect bool
	// MaxUploadBytes bounds a control-API PUT body and the maxSize of
	// minted upload endpoints. Default 5 GiB (DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// OAuthLogin, with OAuth, lets the upload page sign its user in at the
	// authorization server (package uploadpage); nil: URL-mode upload
	// pages answer that sign-in is not configured.
	OAuthLogin *uploadpage.LoginConfig
}

// Env is what the service works with, built by the assembly (package
// server) and shared with the rest of the server.
type Env struct {
	Backend storage.Backend // the whole store, observed
	Keyring *token.Keyring
	Logger  *slog.Logger
	// PublicURL and DownloadURL are the resolved bases of minted URLs.
	PublicURL, DownloadURL string
	// WriteTimeout is the per-write deadline of response bodies.
	WriteTimeout time.Duration
	Gate         *gate.Gate
	MCP          *mcp.Server // its claims rate
	Blobs        *blobs.App  // change and upload notifications
	Facts        *onetime.Facts
	Telemetry    *telemetry.Tracker
	Now          func() time.Time // resumable uploads' clock; nil: time.Now
}

// Server serves the blob service's routes: /v1/, /d/, /u/, and through
// package uploadpage /upload/ and the upload page's sign-in
// (/oauth/callback, /oauth/logout).
type Server struct {
	opts  Options
	env   Env
	log   *slog.Logger
	gate  *gate.Gate
	mcp   *mcp.Server
	blobs *blobs.App
	facts *onetime.Facts
	tel   *telemetry.Tracker
	pages *uploadpage.Server
	tus   *resumable.Server
	links *linktus.Server
}

// New returns the service.
func New(opts Options, env Env) *Server {
	s := &Server{opts: opts, env: env, log: env.Logger, gate: env.Gate, mcp: env.MCP,
		blobs: env.Blobs, facts: env.Facts, tel: env.Telemetry}
	s.links = s.newLinkTus()
	if s.links.Offered() { // file uploads' resumable hint
		s.blobs.SetTusOffset(s.links.Offset)
	}
	s.pages = uploadpage.New(uploadpage.Options{OAuthLogin: opts.OAuthLogin}, uploadpage.Env{Keyring: env.Keyring,
		PublicURL: env.PublicURL, MaxUpload: s.maxUpload(), Gate: env.Gate, Logger: env.Logger, Resumable: s.links.Offered()})
	s.tus = s.newResumable()
	return s
}

// Owns reports whether path is one of the service's routes.
func (s *Server) Owns(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/d/") ||
		strings.HasPrefix(path, "/u/") || s.pages.Owns(path)
}

// Serve answers a request for one of the service's routes (Owns).
func (s *Server) Serve(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	switch {
	case strings.HasPrefix(path, "/v1/"):
		s.serveControl(ctx) // control.go
	case strings.HasPrefix(path, "/d/"):
		s.serveDownload(ctx) // download.go
	case strings.HasPrefix(path, "/u/"):
		if tok, rest, ok := linktus.Split(path); ok {
			s.links.Serve(ctx, tok, rest) // package linktus
			return
		}
		s.serveUpload(ctx) // upload.go
	default:
		s.pages.Serve(ctx) // package uploadpage
	}
}

// Admit runs the checks a route makes before it reads a request body, for
// Expect: 100-continue; on refusal it answers and reports false. Routes
// that read no body refuse one.
func (s *Server) Admit(ctx *fasthttp.RequestCtx) bool {
	path := string(ctx.Path())
	switch {
	case strings.HasPrefix(path, "/v1/"):
		ep, ok := s.controlRoute(ctx)
		return ok && (ep.admit == nil || ep.admit())
	case strings.HasPrefix(path, "/u/"):
		if tok, rest, ok := linktus.Split(path); ok {
			return s.links.Admit(ctx, tok, rest)
		}
		_, _, _, ok := s.checkUpload(ctx, false)
		return ok
	case strings.HasPrefix(path, "/d/"), strings.HasPrefix(path, "/upload/"):
	default:
		gate.NotFound(ctx)
		return false
	}
	gate.APIError(ctx, http.StatusBadRequest, "unexpected_body", "this route takes no request body")
	ctx.SetConnectionClose()
	return false
}

// storeFor is the store as id sees it.
func (s *Server) storeFor(id auth.Identity) storage.Backend {
	return s.gate.Tenancy.Store(s.env.Backend, id)
}

// errShortBody reports a request body that ended before its Content-Length.
var errShortBody = errors.New("server: request body ended early")
