package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const refreshTTL = 24 * time.Hour

var errNotFound = errors.New("not found")

// storage keeps everything in memory; it implements op.Storage.
type storage struct {
	cfg    *config
	issuer string
	keys   *keyring

	mu        sync.Mutex
	requests  map[string]*authRequest  // by id
	codes     map[string]string        // code → auth request id
	tokens    map[string]*accessToken  // by id
	refreshes map[string]*refreshGrant // by token
}

func newStorage(cfg *config, issuer string, keys *keyring) *storage {
	return &storage{
		cfg: cfg, issuer: issuer, keys: keys,
		requests:  map[string]*authRequest{},
		codes:     map[string]string{},
		tokens:    map[string]*accessToken{},
		refreshes: map[string]*refreshGrant{},
	}
}

// CreateAuthRequest stores an authorization request zitadel has checked
// against the client, after the checks it leaves out: PKCE S256 and the
// RFC 8707 resources.
func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if err := s.checkPKCE(req); err != nil {
		return nil, err
	}
	resources, err := s.grantableResources(ctx, req.ClientID)
	if err != nil {
		return nil, err
	}
	a := &authRequest{
		id: randomID(16), clientID: req.ClientID, redirectURI: req.RedirectURI,
		state: req.State, nonce: req.Nonce,
		responseType: req.ResponseType, responseMode: req.ResponseMode,
		scopes:    slices.DeleteFunc(slices.Clone(req.Scopes), func(sc string) bool { return !slices.Contains(s.cfg.scopes, sc) }),
		resources: resources,
	}
	if req.CodeChallenge != "" {
		a.challenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[a.id] = a
	return a, nil
}

func (s *storage) checkPKCE(req *oidc.AuthRequest) error {
	if req.CodeChallenge == "" && s.cfg.clients[req.ClientID].public() {
		return oidc.ErrInvalidRequest().WithDescription("code_challenge (PKCE S256) is required")
	}
	if req.CodeChallenge != "" && req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	}
	return nil
}

// grantableResources returns the resources of the authorization request,
// each one a -resource value, or else the default audience.
func (s *storage) grantableResources(ctx context.Context, clientID string) ([]string, error) {
	asked := resourcesFrom(ctx)
	for _, r := range asked {
		if !slices.Contains(s.cfg.resources, r) {
			return nil, errInvalidTarget("unknown resource " + r)
		}
	}
	if len(asked) > 0 {
		return asked, nil
	}
	return s.defaultAudience(clientID), nil
}

// defaultAudience is the audience of a token whose authorization request
// named no resource: the first -resource, or else the client.
func (s *storage) defaultAudience(clientID string) []string {
	if len(s.cfg.resources) > 0 {
		return s.cfg.resources[:1]
	}
	return []string{clientID}
}

// login checks the credentials against the auth request's user, grants the
// scopes the user may have and marks the request done.
func (s *storage) login(id, username, password string) error {
	u := s.userByName(username)
	if u == nil || subtle.ConstantTimeCompare([]byte(u.password), []byte(password)) != 1 {
		return errors.New("wrong username or password")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.requests[id]
	if a == nil {
		return errors.New("unknown or expired authorization request")
	}
	a.scopes = slices.DeleteFunc(a.scopes, func(sc string) bool { return !u.allowedFor(sc) })
	a.subject, a.authTime, a.done = u.id, time.Now(), true
	return nil
}

func (s *storage) userByName(name string) *user {
	for _, u := range s.cfg.users {
		if u.name == name {
			return u
		}
	}
	return nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.requests[id]; a != nil {
		return a, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errNotFound
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest runs once the code is exchanged, so a code works once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, reqID := range s.codes {
		if reqID == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	t, err := s.newAccessToken(ctx, req)
	if err != nil {
		return "", time.Time{}, err
	}
	return t.id, t.expiry, nil
}

func (s *storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	t, err := s.newAccessToken(ctx, req)
	if err != nil {
		return "", "", time.Time{}, err
	}
	g := newRefreshGrant(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refreshes, current)
	s.refreshes[g.token] = g
	return t.id, g.token, t.expiry, nil
}

// newAccessToken stores the access token of a code or refresh request.
func (s *storage) newAccessToken(ctx context.Context, req op.TokenRequest) (*accessToken, error) {
	var clientID string
	var granted []string
	switch r := req.(type) {
	case *authRequest:
		clientID, granted = r.clientID, r.resources
	case *refreshGrant:
		clientID, granted = r.clientID, r.resources
	default:
		return nil, oidc.ErrUnsupportedGrantType()
	}
	audience, err := narrowResources(ctx, granted)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	t := &accessToken{
		id: randomID(16), subject: req.GetSubject(), clientID: clientID,
		audience: audience, scopes: req.GetScopes(),
		issued: now, expiry: now.Add(s.cfg.tokenTTL),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[t.id] = t
	return t, nil
}

// newRefreshGrant makes the grant of a new refresh token: from a code
// exchange, or the rotation of a refresh token, whose grant it keeps whole.
func newRefreshGrant(req op.TokenRequest) *refreshGrant {
	var g refreshGrant
	switch r := req.(type) {
	case *authRequest:
		g = refreshGrant{subject: r.subject, clientID: r.clientID, granted: r.scopes, resources: r.resources, authTime: r.authTime}
	case *refreshGrant:
		g = *r
	}
	g.token, g.scopes, g.expiry = randomID(24), g.granted, time.Now().Add(refreshTTL)
	return &g
}

func (s *storage) accessToken(id string) *accessToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[id]
}

func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.refreshes[token]
	if g == nil || time.Now().After(g.expiry) {
		return nil, op.ErrInvalidRefreshToken
	}
	c := *g
	return &c, nil
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, _ string, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.refreshes[token]; g != nil {
		return g.subject, g.token, nil
	}
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) RevokeToken(_ context.Context, token, _, _ string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refreshes, token)
	delete(s.tokens, token)
	return nil
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return s.keys.current(), nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{s.keys.current().alg}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) { return s.keys.publicKeys(), nil }

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c := s.cfg.clients[id]; c != nil {
		return c, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c := s.cfg.clients[id]
	if c == nil || c.public() || subtle.ConstantTimeCompare([]byte(c.secret), []byte(secret)) != 1 {
		return errors.New("wrong client credentials")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, _ []string) error {
	s.setUserinfo(info, userID)
	return nil
}

func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	s.setUserinfo(info, subject)
	return nil
}

func (s *storage) setUserinfo(info *oidc.UserInfo, userID string) {
	info.Subject = userID
	if u := s.cfg.users[userID]; u != nil {
		info.PreferredUsername = u.name
	}
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	t := s.accessToken(tokenID)
	if t == nil {
		return errNotFound
	}
	resp.Active, resp.Subject, resp.ClientID = true, subject, t.clientID
	resp.Scope, resp.Audience = t.scopes, t.audience
	resp.Expiration = oidc.FromTime(t.expiry)
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("private_key_jwt is not supported")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grants are not supported")
}

func (s *storage) Health(context.Context) error { return nil }
