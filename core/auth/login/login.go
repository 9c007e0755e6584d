package login

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
)

// Limits of the sign-in.
const (
	// MaxTTL bounds a sign-in, whatever the token's lifetime.
	MaxTTL           = time.Hour
	tokenTimeout     = 10 * time.Second
	maxTokenResponse = 64 << 10
)

// Scope is what the sign-in asks for: enough for a token the resource
// server accepts from a user who may upload.
const Scope = "openid " + auth.ScopeWrite

// Client is mcpblob's own OAuth client at the authorization server.
type Client struct {
	ClientID     string
	ClientSecret string // "" for a public client
	// The authorization server's endpoints (from its metadata).
	AuthorizationEndpoint, TokenEndpoint string
	// RedirectURI is the callback; Resource the RFC 8707 resource (the MCP
	// endpoint), so the token's audience is the one the verifier wants.
	RedirectURI, Resource string
	// Verifier checks the access token the code is exchanged for.
	Verifier auth.TokenVerifier
}

// NewState returns a fresh state and PKCE verifier (130 and 260 bits;
// PKCE wants 43–128 characters).
func NewState() (state, verifier string) {
	return rand.Text(), rand.Text() + rand.Text()
}

// AuthorizationURL is where the browser signs in: the authorization code
// flow with PKCE S256 for state and verifier. reauth asks the AS to
// authenticate anew (prompt=login).
func (c Client) AuthorizationURL(state, verifier string, reauth bool) (string, error) {
	u, err := url.Parse(c.AuthorizationEndpoint)
	if err != nil {
		return "", fmt.Errorf("login: authorization endpoint: %w", err)
	}
	sum := sha256.Sum256([]byte(verifier))
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ClientID)
	q.Set("redirect_uri", c.RedirectURI)
	q.Set("scope", Scope)
	q.Set("state", state)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", c.Resource)
	if reauth {
		q.Set("prompt", "login")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// httpClient talks to the token endpoint: bounded in time, and a redirect
// is an error (a token endpoint has no reason to redirect a POST carrying
// a client secret elsewhere).
var httpClient = &http.Client{
	Timeout:       tokenTimeout,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// tokenResponse is the part of an RFC 6749 §5.1 answer the sign-in uses.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Error       string `json:"error"`
}

// Redeem exchanges code at the token endpoint and verifies the access
// token like any bearer (issuer, audience, expiry, signature): the login
// is worth what the token is. It returns the identity and when the login
// ends: the token's expiry, at most MaxTTL from now. Errors never
// quote the code or the token.
func (c Client) Redeem(code, verifier string) (auth.Identity, time.Time, error) {
	if code == "" {
		return auth.Identity{}, time.Time{}, errors.New("the callback has no code")
	}
	ctx, cancel := context.WithTimeout(context.Background(), tokenTimeout)
	defer cancel()
	tr, err := c.exchange(ctx, code, verifier)
	if err != nil {
		return auth.Identity{}, time.Time{}, err
	}
	id, err := c.Verifier.VerifyToken(ctx, tr.AccessToken)
	if err != nil {
		return auth.Identity{}, time.Time{}, fmt.Errorf("the access token was not accepted: %w", err)
	}
	if id.Principal == "" {
		return auth.Identity{}, time.Time{}, errors.New("the access token names no principal")
	}
	now := time.Now()
	expires := now.Add(MaxTTL)
	if tr.ExpiresIn > 0 && tr.ExpiresIn < int64(MaxTTL/time.Second) {
		expires = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if exp, ok := jwtExpiry(tr.AccessToken); ok && exp.Before(expires) {
		expires = exp
	}
	if !expires.After(now) {
		return auth.Identity{}, time.Time{}, errors.New("the access token has expired")
	}
	return id, expires, nil
}

// exchange posts the authorization code grant (RFC 6749 §4.1.3) with
// the PKCE verifier; a confidential client authenticates with HTTP Basic
// (§2.3.1: id and secret form-encoded first).
func (c Client) exchange(ctx context.Context, code, verifier string) (tokenResponse, error) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {c.RedirectURI}, "client_id": {c.ClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return tokenResponse{}, fmt.Errorf("token endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return tokenResponse{}, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	var tr tokenResponse
	switch {
	case err != nil:
		return tr, fmt.Errorf("token endpoint: reading the answer: %w", err)
	case len(body) > maxTokenResponse:
		return tr, fmt.Errorf("token endpoint: answer over %d bytes", maxTokenResponse)
	case json.Unmarshal(body, &tr) != nil:
		return tr, fmt.Errorf("token endpoint: %s, not JSON", resp.Status)
	case resp.StatusCode != http.StatusOK || tr.AccessToken == "":
		return tr, fmt.Errorf("token endpoint: %s %s", resp.Status, Printable(tr.Error))
	case !strings.EqualFold(tr.TokenType, "Bearer"):
		return tr, fmt.Errorf("token endpoint: token type %q, want Bearer", Printable(tr.TokenType))
	}
	return tr, nil
}

// jwtExpiry reads "exp" from a JWT's payload. Only for a token that has
// just been verified: the payload is trusted because the signature was.
func jwtExpiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Exp float64 `json:"exp"`
	}
	if err != nil || json.Unmarshal(payload, &c) != nil || c.Exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(c.Exp), 0), true
}

// Printable bounds an AS-supplied error code to a short token of
// printable ASCII for the page and the log.
func Printable(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}
