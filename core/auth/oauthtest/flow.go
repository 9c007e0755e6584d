package oauthtest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// MintRequest asks the server for a token signed with its current key.
// Zero fields take a good token's values (iss the issuer, aud the default
// audience, a full lifetime); Claims are added last and override any claim.
type MintRequest struct {
	Sub       string
	Scope     string // space-separated
	Aud       any    // string or []string
	Iss       string
	ExpiresIn time.Duration // from now, may be negative; 0: the server's token lifetime
	NotBefore time.Duration // nbf from now, may be positive
	Kid       string        // header kid instead of the key's
	Claims    map[string]any
}

// MarshalJSON writes the body of POST /test/mint.
func (m MintRequest) MarshalJSON() ([]byte, error) {
	type wire struct {
		Sub         string         `json:"sub,omitempty"`
		Scope       string         `json:"scope,omitempty"`
		Aud         any            `json:"aud,omitempty"`
		Iss         string         `json:"iss,omitempty"`
		ExpiresIn   int64          `json:"expires_in,omitempty"`
		NotBeforeIn int64          `json:"not_before_in,omitempty"`
		Kid         string         `json:"kid,omitempty"`
		Claims      map[string]any `json:"claims,omitempty"`
	}
	return json.Marshal(wire{m.Sub, m.Scope, m.Aud, m.Iss,
		int64(m.ExpiresIn / time.Second), int64(m.NotBefore / time.Second), m.Kid, m.Claims})
}

// Mint returns a JWT access token made to m's measure.
func (s *Server) Mint(t testing.TB, m MintRequest) string {
	t.Helper()
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		AccessToken string `json:"access_token"`
	}
	s.postJSON(t, "/test/mint", body, &out)
	return out.AccessToken
}

// Rotate gives the server a new signing key, drops the old one from its
// JWKS and returns the new kid.
func (s *Server) Rotate(t testing.TB) string {
	t.Helper()
	var out struct{ Kid string }
	s.postJSON(t, "/test/rotate", nil, &out)
	return out.Kid
}

func (s *Server) postJSON(t testing.TB, path string, body []byte, out any) {
	t.Helper()
	resp, err := s.http.Post(s.root+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, out) != nil {
		t.Fatalf("POST %s: %s %s", path, resp.Status, data)
	}
}

// Login plays the user: given an authorization URL, follows the AS's login
// page with username/password and returns the redirect URL (with code and
// state) the AS sends the browser to. When the AS refuses the request it
// returns its error redirect (error=…) instead; a refused login fails the
// test.
func (s *Server) Login(t testing.TB, authorizeURL, username, password string) *url.URL {
	t.Helper()
	next := s.follow(t, http.MethodGet, authorizeURL, nil)
	if !s.onAS(next) {
		return next
	}
	page, err := s.http.Get(next.String())
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Fatalf("login page %s: %s", next, page.Status)
	}
	id := next.Query().Get("id")
	form := url.Values{"id": {id}, "username": {username}, "password": {password}}
	return s.follow(t, http.MethodPost, s.Issuer+"/login", form)
}

// follow sends a request and follows the redirects that stay on the AS; it
// returns the first redirect off the AS, or the login page.
func (s *Server) follow(t testing.TB, method, target string, form url.Values) *url.URL {
	t.Helper()
	for range 5 {
		req, err := http.NewRequest(method, target, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := s.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		next, err := resp.Location()
		if resp.StatusCode != http.StatusFound || err != nil {
			t.Fatalf("%s %s: %s %s", method, target, resp.Status, body)
		}
		if !s.onAS(next) || next.Path == s.loginPath() {
			return next
		}
		method, target, form = http.MethodGet, next.String(), nil
	}
	t.Fatalf("more than 5 redirects on the AS from %s", target)
	return nil
}

func (s *Server) onAS(u *url.URL) bool { return u.Scheme+"://"+u.Host == s.root }

func (s *Server) loginPath() string { return strings.TrimPrefix(s.Issuer, s.root) + "/login" }

// Token runs a full code+PKCE flow for a public client and returns the
// access token. resource may be empty (no RFC 8707 parameter).
func (s *Server) Token(t testing.TB, clientID, redirectURI, resource, username, password string, scopes ...string) string {
	t.Helper()
	verifier, challenge := pkce()
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"scope": {strings.Join(scopes, " ")}, "state": {"oauthtest"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}
	if resource != "" {
		q.Set("resource", resource)
	}
	back := s.Login(t, s.Issuer+"/authorize?"+q.Encode(), username, password).Query()
	if back.Get("code") == "" || back.Get("state") != "oauthtest" {
		t.Fatalf("authorization refused: %v", back)
	}
	resp, err := s.http.PostForm(s.Issuer+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {back.Get("code")},
		"redirect_uri": {redirectURI}, "client_id": {clientID}, "code_verifier": {verifier},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token request: %s %s", resp.Status, data)
	}
	return tok.AccessToken
}

func pkce() (verifier, challenge string) {
	verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}
