package uploadpage

import (
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/token"
)

// Options tune the pages.
type Options struct {
	// OAuthLogin, with OAuth, lets the upload page sign its user in at the
	// authorization server (login.go); nil: URL-mode upload pages answer
	// that sign-in is not configured.
	OAuthLogin *LoginConfig
}

// Env is what the pages work with, given by the blob service.
type Env struct {
	Keyring *token.Keyring
	// PublicURL is the base of the sign-in's callback and resource.
	PublicURL string
	// MaxUpload is the largest file a page offers to send when its
	// token names no smaller maxSize.
	MaxUpload int64
	Gate      *gate.Gate
	Logger    *slog.Logger
	// Resumable: the upload endpoints offer tus (/u/{token}/tus/), which
	// the page then uses.
	Resumable bool
}

// Server serves the upload page and its sign-in.
type Server struct {
	opts Options
	env  Env
	gate *gate.Gate
	log  *slog.Logger
}

// New returns the pages.
func New(opts Options, env Env) *Server {
	return &Server{opts: opts, env: env, gate: env.Gate, log: env.Logger}
}

// Owns reports whether path is one of the pages': /upload/{token}, the
// sign-in's callback and its sign-out.
func (s *Server) Owns(path string) bool {
	return strings.HasPrefix(path, "/upload/") || path == callbackPath || path == logoutPath
}

// Serve answers a request for one of the pages (Owns).
func (s *Server) Serve(ctx *fasthttp.RequestCtx) {
	switch path := string(ctx.Path()); path {
	case callbackPath:
		s.serveLoginCallback(ctx) // login.go
	case logoutPath:
		s.serveLogout(ctx) // login.go
	default:
		s.serveUploadPage(ctx) // uploadpage.go
	}
}

// LoginSubject is the principal signed in on the upload page (its login
// cookie), for the upload endpoint's check of who sends the file.
func (s *Server) LoginSubject(ctx *fasthttp.RequestCtx) (string, bool) {
	return s.loginSubject(ctx)
}

// verifyUpload checks an upload endpoint's token.
func (s *Server) verifyUpload(tok string) (token.Claims, error) {
	return s.env.Keyring.Verify(tok, token.PurposeUpload)
}

// uploadMode is request_upload's mode an upload token carries ("url",
// "binary"), "" for a token without it.
func uploadMode(claims token.Claims) string {
	var data blobs.UploadTokenData
	if len(claims.Data) > 0 {
		_ = json.Unmarshal(claims.Data, &data)
	}
	return data.Mode
}
