package server

import "github.com/valyala/fasthttp"

// LoginConfig is mcpblob's own OAuth client at the authorization server,
// with which the upload page signs its user in (authorization code with
// PKCE).
type LoginConfig struct {
	ClientID     string
	ClientSecret string // "" for a public client
	// The authorization server's endpoints (from its metadata).
	AuthorizationEndpoint, TokenEndpoint string
}

// loginSubject returns the subject the upload page's login cookie names,
// when it is valid.
func (s *Server) loginSubject(ctx *fasthttp.RequestCtx) (string, bool) {
	return "", false
}
