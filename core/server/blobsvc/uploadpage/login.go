package uploadpage

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/auth/login"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
	"github.com/mcpblob/mcpblob/core/token"
)

// The upload page's sign-in (docs/auth.md): a URL-mode elicitation sends
// the user's browser to /upload/{token}, and whoever opens that link must
// prove to be the user the upload was requested for, or a phishing link
// would let a victim upload into the attacker's request (or the reverse).
// With OAuth configured, the page signs its user in at the same
// authorization server that issues the MCP access tokens (authorization
// code with PKCE S256, RFC 8707 resource = the MCP endpoint, so the
// existing verifier accepts the token), and keeps only who signed in, in a
// sealed cookie:
//
//	GET /upload/{token}   no valid login: 302 to the AS (state cookie set);
//	                      signed in as another principal: 403 page;
//	                      signed in as the token's principal: the page.
//	GET /oauth/callback   checks state, exchanges the code, verifies the
//	                      access token, sets the login cookie, 303 back.
//	POST /oauth/logout    clears the login cookie (same-origin only).
//
// The access token itself is dropped after verification: it never reaches
// a cookie or a log. /u/{token} (uploadCaller) reads the same cookie. With
// API keys only there is no AS to sign in at: the link stays its own
// credential, bound to its principal and its single use.

// LoginConfig is mcpblob's own OAuth client at the authorization server,
// with which the upload page signs its user in (authorization code with
// PKCE).
type LoginConfig struct {
	ClientID     string
	ClientSecret string // "" for a public client
	// The authorization server's endpoints (from its metadata).
	AuthorizationEndpoint, TokenEndpoint string
}

const (
	loginCookie       = "mcpblob_login"       // sealed {purpose login, principal, expiry}
	loginStateCookie  = "mcpblob_login_state" // sealed {state, PKCE verifier, return path, expiry}
	purposeLogin      = "login"
	purposeLoginState = "login-state"
	callbackPath      = telemetry.PathOAuthCallback
	logoutPath        = telemetry.PathOAuthLogout
	loginStateTTL     = 10 * time.Minute
)

// loginSubject returns the principal the upload page's login cookie names,
// when the cookie is present, authentic and unexpired.
func (s *Server) loginSubject(ctx *fasthttp.RequestCtx) (string, bool) {
	v := ctx.Request.Header.Cookie(loginCookie)
	if len(v) == 0 {
		return "", false
	}
	c, err := s.env.Keyring.Verify(string(v), purposeLogin)
	if err != nil || c.Principal == "" {
		return "", false
	}
	return c.Principal, true
}

// uploadPageLogin decides whether the upload page for a valid token may be
// served. It applies to URL-mode links when OAuth is configured; otherwise
// the link is its own credential, as before. On refusal it has answered
// (a redirect to the AS or an HTML page) and reports false.
func (s *Server) uploadPageLogin(ctx *fasthttp.RequestCtx, tok string, claims token.Claims) bool {
	if s.gate.Auth.OAuth == nil || uploadMode(claims) != "url" {
		return true
	}
	if s.opts.OAuthLogin == nil {
		s.loginMessage(ctx, http.StatusServiceUnavailable, "Sign-in unavailable",
			"Sign-in is not configured on this server, so this upload link cannot be used. Ask the server's operator.", "")
		return false
	}
	sub, ok := s.loginSubject(ctx)
	switch {
	case !ok:
		s.startLogin(ctx, "/upload/"+tok, ctx.QueryArgs().Has("signin"))
		return false
	case sub != claims.Principal:
		// Who the upload is for stays unsaid: the link may have reached
		// the wrong person.
		s.loginMessage(ctx, http.StatusForbidden, "Signed in as another user",
			"You are signed in as another user than the one this upload was requested for. Sign out, then sign in as that user.",
			logoutPath+"?next="+url.QueryEscape("/upload/"+tok))
		return false
	}
	return true
}

// startLogin sends the browser to the AS's authorization endpoint. The
// state and the PKCE verifier travel in a sealed cookie bound to this
// browser, so the callback needs no server-side session and works on any
// node sharing the keyring. reauth asks the AS to authenticate anew (after
// a sign-out, so its own session does not sign the same user back in).
func (s *Server) startLogin(ctx *fasthttp.RequestCtx, returnPath string, reauth bool) {
	state, verifier := login.NewState()
	rec, err := s.env.Keyring.Seal(token.Claims{Purpose: purposeLoginState, Nonce: state,
		Object: returnPath, Data: []byte(verifier), Expires: time.Now().Add(loginStateTTL)})
	u, uerr := s.loginClient().AuthorizationURL(state, verifier, reauth)
	if err != nil || uerr != nil {
		s.log.Error("server: starting sign-in failed", "err", errors.Join(err, uerr))
		s.loginMessage(ctx, http.StatusInternalServerError, "Sign-in failed", "Sign-in cannot start right now. Try again later.", "")
		return
	}
	s.setCookie(ctx, loginStateCookie, rec, callbackPath, loginStateTTL)
	noStore(ctx)
	ctx.Response.Header.Set("Location", u)
	ctx.SetStatusCode(http.StatusFound)
}

// loginClient is the sign-in's OAuth client.
func (s *Server) loginClient() login.Client {
	lc := s.opts.OAuthLogin
	return login.Client{ClientID: lc.ClientID, ClientSecret: lc.ClientSecret, AuthorizationEndpoint: lc.AuthorizationEndpoint,
		TokenEndpoint: lc.TokenEndpoint, RedirectURI: s.callbackURL(), Resource: auth.CanonicalResource(s.env.PublicURL),
		Verifier: s.gate.Auth.OAuth}
}

func (s *Server) callbackURL() string {
	return strings.TrimSuffix(s.env.PublicURL, "/") + callbackPath
}

// serveLoginCallback completes the sign-in: the AS sent the browser back
// with a code (or an error) and the state startLogin sealed in a cookie.
func (s *Server) serveLoginCallback(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() { // not even HEAD: it redeems the code
		s.gate.DrainSmall(ctx)
		gate.MethodNotAllowed(ctx, "GET")
		return
	}
	if s.gate.Auth.OAuth == nil || s.opts.OAuthLogin == nil {
		s.loginMessage(ctx, http.StatusNotFound, "Not found", "Sign-in is not configured on this server.", "")
		return
	}
	rec, ok := s.loginState(ctx)
	if !ok {
		return
	}
	// The state is spent either way: a second use of the callback URL
	// (back button, replay) finds no cookie.
	s.setCookie(ctx, loginStateCookie, "", callbackPath, -1)
	args := ctx.QueryArgs()
	if e := args.Peek("error"); len(e) > 0 {
		s.log.Info("server: the authorization server refused the sign-in", "error", login.Printable(string(e)))
		s.loginMessage(ctx, http.StatusForbidden, "Sign-in refused",
			"The sign-in was not completed ("+login.Printable(string(e))+"). Open the upload link again to retry.", "")
		return
	}
	id, expires, err := s.loginClient().Redeem(string(args.Peek("code")), string(rec.Data))
	if err != nil {
		s.log.Warn("server: sign-in failed", "err", err)
		s.loginMessage(ctx, http.StatusBadGateway, "Sign-in failed",
			"The sign-in could not be completed. Open the upload link again to retry.", "")
		return
	}
	cookie, err := s.env.Keyring.Seal(token.Claims{Purpose: purposeLogin, Principal: id.Principal, Expires: expires})
	if err != nil {
		s.log.Error("server: sealing the login cookie failed", "err", err)
		s.loginMessage(ctx, http.StatusInternalServerError, "Sign-in failed", "Try again later.", "")
		return
	}
	s.log.Debug("server: upload page sign-in", "principal", id.Principal)
	s.setCookie(ctx, loginCookie, cookie, "/", time.Until(expires))
	noStore(ctx)
	ctx.Response.Header.Set("Location", rec.Object)
	ctx.SetStatusCode(http.StatusSeeOther)
}

// loginState checks the callback's state parameter against the state
// cookie (CSRF defence: the code must come back to the browser that asked
// for it) and returns the sealed record. On refusal it answers 400.
func (s *Server) loginState(ctx *fasthttp.RequestCtx) (token.Claims, bool) {
	rec, err := s.env.Keyring.Verify(string(ctx.Request.Header.Cookie(loginStateCookie)), purposeLoginState)
	state := ctx.QueryArgs().Peek("state")
	if err != nil || len(state) == 0 || subtle.ConstantTimeCompare(state, []byte(rec.Nonce)) != 1 ||
		!strings.HasPrefix(rec.Object, "/upload/") {
		s.loginMessage(ctx, http.StatusBadRequest, "Sign-in expired",
			"This sign-in does not match this browser or has expired. Open the upload link again.", "")
		return token.Claims{}, false
	}
	return rec, true
}

// serveLogout clears the login cookie. It takes POST only, from this
// origin (Origin and Sec-Fetch-Site), so another site cannot sign the
// user out behind their back; it answers a page whose link goes back to
// the upload page with a fresh sign-in (no redirect: the form's CSP
// form-action 'self' would refuse the hop to the AS).
func (s *Server) serveLogout(ctx *fasthttp.RequestCtx) {
	s.gate.DrainSmall(ctx)
	if !ctx.IsPost() {
		gate.MethodNotAllowed(ctx, "POST")
		return
	}
	site := string(ctx.Request.Header.Peek("Sec-Fetch-Site"))
	if why := s.gate.CheckHostOrigin(ctx); why != "" || (site != "" && site != "same-origin") {
		s.loginMessage(ctx, http.StatusForbidden, "Sign-out refused", "Sign out from this site's own pages.", "")
		return
	}
	s.setCookie(ctx, loginCookie, "", "/", -1)
	d := loginPageData{Title: "Signed out", Message: "You are signed out."}
	// Only back to an upload page of a genuine link: no open redirect.
	if tok, ok := strings.CutPrefix(string(ctx.QueryArgs().Peek("next")), "/upload/"); ok {
		if _, err := s.verifyUpload(tok); err == nil {
			d.Retry, d.RetryText = "/upload/"+tok+"?signin=again", "Sign in as another user"
		}
	}
	s.renderLoginPage(ctx, http.StatusOK, d)
}

// setCookie sets a host-only, HttpOnly, Secure, SameSite=Lax cookie;
// ttl < 0 deletes it. Lax, not Strict: the callback and the return to the
// page are top-level navigations that start at the AS, another site.
// Browsers (and Go's cookie jar) treat http://localhost and 127.0.0.1 as
// secure contexts, so Secure holds on loopback too.
func (s *Server) setCookie(ctx *fasthttp.RequestCtx, name, value, path string, ttl time.Duration) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath(path)
	c.SetHTTPOnly(true)
	c.SetSecure(true)
	c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	if ttl < 0 {
		c.SetMaxAge(-1)
	} else {
		c.SetMaxAge(max(1, int(ttl/time.Second)))
	}
	ctx.Response.Header.SetCookie(c)
}
