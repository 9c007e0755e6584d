package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/auth/login"
	"github.com/mcpblob/mcpblob/core/auth/oauth"
	"github.com/mcpblob/mcpblob/core/auth/oauthtest"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/uploadpage"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// The upload page's sign-in (login.go) against the real test authorization
// server (cmd/mcpblob-testas): mcpblob signs the browser in with code and
// PKCE, keeps the principal in a sealed cookie, and lets only the user the
// upload was requested for see the page and post to /u.

const loginClient = "mcpblob-upload"

// loginEnv is mcpblob with OAuth and the upload page's sign-in, its
// authorization server, and what the token endpoint answered.
type loginEnv struct {
	base   string
	srv    *Server
	as     *oauthtest.Server
	st     storage.Backend
	logs   *logBuffer
	tokens *tokenTap
}

// tokenTap sits between mcpblob and the AS's token endpoint and keeps the
// access tokens it hands out, so the test can look for them where they
// must never be.
type tokenTap struct {
	mu     sync.Mutex
	tokens []string
	basic  bool // a request authenticated with HTTP Basic
}

func (tp *tokenTap) seen() (tokens []string, basic bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]string(nil), tp.tokens...), tp.basic
}

// startTokenTap proxies POSTs to endpoint and records access_token.
func startTokenTap(t *testing.T, endpoint string) (*tokenTap, string) {
	tp := &tokenTap{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		req, _ := http.NewRequest(r.Method, endpoint, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		var tr struct {
			AccessToken string `json:"access_token"`
		}
		_, _, basic := r.BasicAuth()
		tp.mu.Lock()
		if json.Unmarshal(out, &tr) == nil && tr.AccessToken != "" {
			tp.tokens = append(tp.tokens, tr.AccessToken)
		}
		tp.basic = tp.basic || basic
		tp.mu.Unlock()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(out)
	}))
	t.Cleanup(ts.Close)
	return tp, ts.URL
}

// startLoginEnv starts the AS (mcpblob's client registered with secret, or
// public when secret is "") and mcpblob on a listener chosen first, so its
// PublicURL, the resource and the redirect URI agree. login false leaves
// Options.OAuthLogin nil.
func startLoginEnv(t *testing.T, secret string, login bool) *loginEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	client := loginClient
	if secret != "" {
		client += ":" + secret
	}
	as := oauthtest.Start(t, oauthtest.Options{Clients: []string{client + "=" + base + callbackPath},
		Resources: []string{auth.CanonicalResource(base)}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := oauth.New(ctx, oauth.Config{Issuer: as.Issuer, Audience: auth.CanonicalResource(base)})
	if err != nil {
		t.Fatal(err)
	}
	md := v.Metadata()
	e := &loginEnv{base: base, as: as, st: newLocalStore(t), logs: &logBuffer{}}
	opts := Options{
		Backend:   e.st,
		PublicURL: base,
		Logger:    slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Auth:      Auth{OAuth: v, OAuthIssuer: as.Issuer},
	}
	if login {
		var tokenURL string
		e.tokens, tokenURL = startTokenTap(t, md.TokenEndpoint)
		opts.Service.OAuthLogin = &uploadpage.LoginConfig{ClientID: loginClient, ClientSecret: secret,
			AuthorizationEndpoint: md.AuthorizationEndpoint, TokenEndpoint: tokenURL}
	}
	_, e.srv = startTestServerOn(t, opts, ln)
	return e
}

// mintPageToken mints a URL-mode upload link's token for principal, as
// request_upload does: stored under the principal's namespace.
func mintPageToken(t *testing.T, srv *Server, principal string) string {
	t.Helper()
	data, _ := json.Marshal(blobs.UploadTokenData{Field: "file", Mode: "url"})
	prefix := srv.gate.Tenancy.RawPrefix(auth.Identity{Principal: principal, Scopes: []string{auth.ScopeWrite}})
	tok, err := srv.opts.Keyring.Seal(token.Claims{Purpose: token.PurposeUpload, Principal: principal, MaxSize: 1 << 20, Prefix: prefix,
		Nonce: token.NewUploadID(), Expires: time.Now().Add(5 * time.Minute), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// browser is a cookie-keeping client that shows every redirect.
type browser struct {
	t          *testing.T
	hc         *http.Client
	setCookies []string // every Set-Cookie received
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request; hdr are header pairs.
func (b *browser) do(method, u, ctype string, body []byte, hdr ...string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	b.setCookies = append(b.setCookies, resp.Header.Values("Set-Cookie")...)
	return resp, string(out)
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	return b.do(http.MethodGet, u, "", nil)
}

// upload posts a small file to /u/{tok}.
func (b *browser) upload(base, tok, name string) (*http.Response, string) {
	b.t.Helper()
	ct, body := multipartBody(b.t, [3]string{name, "text/plain", "hello from the browser\n"})
	return b.do(http.MethodPost, base+"/u/"+tok, ct, body)
}

// startSignIn opens the page without a login and returns the AS
// authorization URL it redirects to, checking the state cookie.
func (e *loginEnv) startSignIn(t *testing.T, b *browser, tok string) string {
	t.Helper()
	resp, body := b.get(e.base + "/upload/" + tok)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, e.as.Issuer) {
		t.Fatalf("page without login: %d %q %s", resp.StatusCode, loc, body)
	}
	q := mustParse(t, loc).Query()
	for k, want := range map[string]string{"response_type": "code", "client_id": loginClient, "code_challenge_method": "S256",
		"redirect_uri": e.base + callbackPath, "resource": auth.CanonicalResource(e.base), "scope": "openid blobs:write"} {
		if q.Get(k) != want {
			t.Errorf("authorization request %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if len(q.Get("state")) < 20 || len(q.Get("code_challenge")) != 43 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("authorization request: state %q, challenge %q, Cache-Control %q", q.Get("state"), q.Get("code_challenge"), resp.Header.Get("Cache-Control"))
	}
	c := wantCookie(t, resp, loginStateCookie, callbackPath)
	if c.MaxAge != int(loginStateTTL/time.Second) || strings.Contains(c.Value, q.Get("state")) {
		t.Errorf("state cookie %+v", c)
	}
	return loc
}

// signIn runs the whole sign-in for user from the page of tok and returns
// the callback URL the AS sent the browser to (spent by now).
func (e *loginEnv) signIn(t *testing.T, b *browser, tok, user string) *url.URL {
	t.Helper()
	cb := e.as.Login(t, e.startSignIn(t, b, tok), user, user+"-pw")
	if cb.Query().Get("code") == "" {
		t.Fatalf("AS answered %s", cb)
	}
	resp, body := b.get(cb.String())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/upload/"+tok {
		t.Fatalf("callback: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	c := wantCookie(t, resp, loginCookie, "/")
	if c.MaxAge <= 0 || c.MaxAge > int(login.MaxTTL/time.Second) || strings.Contains(c.Value, user) {
		t.Errorf("login cookie %+v", c)
	}
	if st := findCookie(resp, loginStateCookie); st == nil || st.MaxAge >= 0 {
		t.Errorf("state cookie not cleared: %+v", st)
	}
	return cb
}

// wantCookie returns resp's Set-Cookie for name, checking the attributes
// every cookie of the sign-in carries.
func wantCookie(t *testing.T, resp *http.Response, name, path string) *http.Cookie {
	t.Helper()
	c := findCookie(resp, name)
	if c == nil {
		t.Fatalf("no %s cookie in %q", name, resp.Header.Values("Set-Cookie"))
	}
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != path || c.Domain != "" {
		t.Errorf("cookie %s: %q: want HttpOnly; Secure; SameSite=Lax; Path=%s; host-only", name, c.Raw, path)
	}
	return c
}

func findCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// wantSecurityHeaders checks the headers every HTML answer carries.
func wantSecurityHeaders(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	h := resp.Header
	if h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("%s: headers %v", what, h)
	}
}

// TestLoginUploadFlow: alice opens her upload link, signs in at the AS,
// comes back with a login cookie, sees the page and uploads; the blob is
// in her namespace. Both a confidential client (HTTP Basic at the token
// endpoint) and a public one (PKCE only).
func TestLoginUploadFlow(t *testing.T) {
	parallel(t)
	for _, tc := range []struct{ name, secret string }{{"confidential", "s3cret-Client"}, {"public", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			e := startLoginEnv(t, tc.secret, true)
			b := newBrowser(t)
			tok := mintPageToken(t, e.srv, "alice")
			cb := e.signIn(t, b, tok, "alice")
			resp, body := b.get(e.base + "/upload/" + tok)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-endpoint="/u/`+tok+`"`) {
				t.Fatalf("page after sign-in: %d %s", resp.StatusCode, body)
			}
			wantSecurityHeaders(t, "page", resp)
			if resp, body = b.upload(e.base, tok, "notes.txt"); resp.StatusCode != http.StatusCreated {
				t.Fatalf("upload: %d %s", resp.StatusCode, body)
			}
			if keys := storedUnder(t, e.st, ""); len(keys) != 1 || !strings.HasPrefix(keys[0], ".ns/alice/") || !strings.HasSuffix(keys[0], "/notes.txt") {
				t.Fatalf("alice's namespace holds %q", keys)
			}
			// The login outlives one link: another of alice's opens at once.
			if resp, _ := b.get(e.base + "/upload/" + mintPageToken(t, e.srv, "alice")); resp.StatusCode != http.StatusOK {
				t.Fatalf("second link: %d", resp.StatusCode)
			}
			// A spent callback does not sign in again.
			if resp, _ := b.get(cb.String()); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("replayed callback: %d", resp.StatusCode)
			}
			tokens, basic := e.tokens.seen()
			if len(tokens) != 1 || basic != (tc.secret != "") {
				t.Fatalf("token endpoint calls: %d tokens, basic %v", len(tokens), basic)
			}
			secrets := append(tokens, cb.Query().Get("code"))
			if tc.secret != "" {
				secrets = append(secrets, tc.secret)
			}
			e.wantNoSecrets(t, b, secrets)
		})
	}
}

// wantNoSecrets checks that no secret (nor a token's signature) is in any
// Set-Cookie the browser got or any line the server logged.
func (e *loginEnv) wantNoSecrets(t *testing.T, b *browser, secrets []string) {
	t.Helper()
	logs, cookies := e.logs.String(), strings.Join(b.setCookies, "\n")
	if !strings.Contains(logs, "upload page sign-in") {
		t.Errorf("the sign-in was not logged (is the log captured?):\n%s", logs)
	}
	for _, sec := range secrets {
		needles := []string{sec}
		if i := strings.LastIndexByte(sec, '.'); i > 0 {
			needles = append(needles, sec[i+1:])
		}
		for _, n := range needles {
			if len(n) < 6 {
				t.Fatalf("bug: secret %q too short to look for", n)
			}
			if strings.Contains(logs, n) || strings.Contains(cookies, n) {
				t.Errorf("a secret (%.8s…) reached the log or a cookie", n)
			}
		}
	}
}

// TestLoginOtherUser: bob signs in on alice's link. The page is refused
// without naming alice, /u refuses his cookie and stores nothing, and he
// can sign out (same origin only) and start over with a fresh sign-in.
func TestLoginOtherUser(t *testing.T) {
	parallel(t)
	e := startLoginEnv(t, "", true)
	b := newBrowser(t)
	tok := mintPageToken(t, e.srv, "alice")
	e.signIn(t, b, tok, "bob")
	resp, body := b.get(e.base + "/upload/" + tok)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "signed in as another user") ||
		strings.Contains(body, "alice") || strings.Contains(body, "data-endpoint") || !strings.Contains(body, `action="/oauth/logout?next=`) {
		t.Fatalf("bob on alice's page: %d %s", resp.StatusCode, body)
	}
	wantSecurityHeaders(t, "other-user page", resp)
	if resp, body := b.upload(e.base, tok, "evil.txt"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "login_required") {
		t.Fatalf("bob's upload: %d %s", resp.StatusCode, body)
	}
	if keys := storedUnder(t, e.st, ".ns/"); len(keys) != 0 {
		t.Fatalf("stored %q", keys)
	}
	logout := e.base + logoutPath + "?next=" + url.QueryEscape("/upload/"+tok)
	for _, hdr := range [][]string{{"Origin", "http://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
		if resp, _ := b.do(http.MethodPost, logout, "", nil, hdr...); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("cross-site sign-out %v: %d", hdr, resp.StatusCode)
		}
	}
	if resp, _ := b.get(logout); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET sign-out: %d", resp.StatusCode)
	}
	resp, body = b.do(http.MethodPost, logout, "", nil, "Origin", e.base, "Sec-Fetch-Site", "same-origin")
	if c := findCookie(resp, loginCookie); resp.StatusCode != http.StatusOK || c == nil || c.MaxAge >= 0 ||
		!strings.Contains(body, `href="/upload/`+tok+`?signin=again"`) {
		t.Fatalf("sign-out: %d %v %s", resp.StatusCode, resp.Header.Values("Set-Cookie"), body)
	}
	resp, _ = b.get(e.base + "/upload/" + tok + "?signin=again")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || mustParse(t, loc).Query().Get("prompt") != "login" {
		t.Fatalf("after sign-out: %d %q", resp.StatusCode, loc)
	}
	e.signIn(t, b, tok, "alice")
	if resp, body := b.upload(e.base, tok, "mine.txt"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("alice's upload after bob signed out: %d %s", resp.StatusCode, body)
	}
}

// TestLoginRefusals: /u without a login, callbacks that do not belong to
// this browser, the AS's error answers, forged cookies.
func TestLoginRefusals(t *testing.T) {
	parallel(t)
	e := startLoginEnv(t, "", true)
	tok := mintPageToken(t, e.srv, "alice")
	b := newBrowser(t)
	if resp, body := b.upload(e.base, tok, "a.txt"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "login_required") {
		t.Fatalf("upload without login: %d %s", resp.StatusCode, body)
	}
	cb := e.as.Login(t, e.startSignIn(t, b, tok), "alice", "alice-pw")
	tampered := *cb
	q := cb.Query()
	q.Set("state", q.Get("state")[:len(q.Get("state"))-2]+"AA")
	tampered.RawQuery = q.Encode()
	resp, body := b.get(tampered.String())
	if resp.StatusCode != http.StatusBadRequest || findCookie(resp, loginCookie) != nil || !strings.Contains(body, "Open the upload link again") {
		t.Fatalf("tampered state: %d %s", resp.StatusCode, body)
	}
	wantSecurityHeaders(t, "tampered state", resp)
	// Another browser (no state cookie) cannot use the code either.
	if resp, _ := newBrowser(t).get(cb.String()); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("callback in another browser: %d", resp.StatusCode)
	}
	// The AS's refusal, with the right state: a clear page, no cookie.
	denied := *cb
	denied.RawQuery = url.Values{"error": {"access_denied"}, "state": {cb.Query().Get("state")}}.Encode()
	resp, body = b.get(denied.String())
	if resp.StatusCode != http.StatusForbidden || findCookie(resp, loginCookie) != nil || !strings.Contains(body, "access_denied") {
		t.Fatalf("AS error answer: %d %s", resp.StatusCode, body)
	}
	wantSecurityHeaders(t, "AS error", resp)
	// Login cookies that are not the server's own, or not login cookies.
	other := token.NewRandomKeyring()
	forged, _ := other.Seal(token.Claims{Purpose: purposeLogin, Principal: "alice", Expires: time.Now().Add(time.Hour)})
	state, _ := e.srv.opts.Keyring.Seal(token.Claims{Purpose: purposeLoginState, Principal: "alice", Expires: time.Now().Add(time.Hour)})
	expired, _ := e.srv.opts.Keyring.Seal(token.Claims{Purpose: purposeLogin, Principal: "alice", Expires: time.Now().Add(-time.Second)})
	plain := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for name, v := range map[string]string{"other keyring": forged, "wrong purpose": state, "expired": expired, "garbage": "x.y"} {
		req, _ := http.NewRequest(http.MethodGet, e.base+"/upload/"+tok, nil)
		req.AddCookie(&http.Cookie{Name: loginCookie, Value: v})
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Errorf("%s login cookie: %d, want a redirect to sign in", name, resp.StatusCode)
		}
	}
}

// TestLoginNotConfigured: OAuth without OAuthLogin cannot establish who
// opens a URL-mode link, so the page says so and /u refuses; with API keys
// only, the link stays its own credential.
func TestLoginNotConfigured(t *testing.T) {
	parallel(t)
	e := startLoginEnv(t, "", false)
	tok := mintPageToken(t, e.srv, "alice")
	b := newBrowser(t)
	resp, body := b.get(e.base + "/upload/" + tok)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "Sign-in is not configured on this server") {
		t.Fatalf("page: %d %s", resp.StatusCode, body)
	}
	wantSecurityHeaders(t, "not configured", resp)
	if resp, _ := b.upload(e.base, tok, "a.txt"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	if resp, _ := b.get(e.base + callbackPath + "?code=x&state=y"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("callback: %d", resp.StatusCode)
	}

	base, srv := startTestServer(t, Options{Backend: newLocalStore(t), Auth: Auth{Keys: []string{HashKey("mcpb_login_test_key_0123456789") + " alice"}}})
	tok = mintPageToken(t, srv, "alice")
	if resp, body := b.get(base + "/upload/" + tok); resp.StatusCode != http.StatusOK || !strings.Contains(body, "data-endpoint") {
		t.Fatalf("API keys only, page: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.upload(base, tok, "a.txt"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("API keys only, upload: %d %s", resp.StatusCode, body)
	}
}
