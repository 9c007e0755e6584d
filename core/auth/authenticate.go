package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
)

// TokenVerifier verifies an OAuth access token (package oauth) and
// returns its identity, or an error whose text is a short reason safe to
// log and to show in error_description ("invalid token: expired").
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (Identity, error)
}

// Authenticator resolves a request's Authorization header to an Identity.
type Authenticator struct {
	Keys   *Keys         // API keys; nil or empty for none
	OAuth  TokenVerifier // OAuth access tokens; nil for none
	Issuer string        // the authorization server, for the metadata
	// Verified, when set, is told every identity a token verified to
	// (the server learns the quota a token names).
	Verified func(Identity)
}

// Enabled reports whether any authentication is configured; without it
// every request is [Open].
func (a *Authenticator) Enabled() bool {
	return a != nil && (a.Keys.Len() > 0 || a.OAuth != nil)
}

// Failure is why a request is refused: Status 401 (no or bad credential)
// or 403 (a credential without the needed scope), with the challenge to
// send.
type Failure struct {
	Status    int
	Challenge Challenge
}

func (f *Failure) Error() string {
	if f.Challenge.Description != "" {
		return "auth: " + f.Challenge.Description
	}
	return "auth: no credential"
}

// ErrUnavailable is a TokenVerifier's error when it cannot verify any
// token for now (the authorization server's keys are out of reach): a
// server fault, answered 503, not the client's.
var ErrUnavailable = errors.New("auth: token verification unavailable")

// Authenticate resolves header (the Authorization header's value) to an
// identity. Every failure is a 401 *Failure whose challenge still lacks
// the metadata URL and the scope (the caller fills them in).
func (a *Authenticator) Authenticate(ctx context.Context, header string) (Identity, *Failure) {
	if !a.Enabled() {
		return Open, nil
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(header), " ")
	cred = strings.TrimSpace(cred)
	switch {
	case header == "":
		return Identity{}, &Failure{Status: 401}
	case !strings.EqualFold(scheme, "Bearer") || cred == "":
		return Identity{}, unauthorized(ErrorInvalidRequest, "the Authorization header must be Bearer and a token")
	}
	if id, ok := a.Keys.Lookup(cred); ok {
		return id, nil
	}
	if a.OAuth == nil || strings.Count(cred, ".") != 2 {
		return Identity{}, unauthorized(ErrorInvalidToken, "unknown token")
	}
	id, err := a.OAuth.VerifyToken(ctx, cred)
	if errors.Is(err, ErrUnavailable) {
		return Identity{}, &Failure{Status: 503, Challenge: Challenge{Description: "tokens cannot be verified right now; retry later"}}
	}
	if err != nil {
		return Identity{}, unauthorized(ErrorInvalidToken, reason(err))
	}
	id.Method = "oauth"
	id.Scopes = NormalizeScopes(id.Scopes)
	if a.Verified != nil {
		a.Verified(id)
	}
	return id, nil
}

// StillValid returns a check of whether the credential in header, which
// authenticated as id, is still accepted as id, for what outlives the
// request (a notification stream): an API key until [Keys.Replace] drops
// it or gives it another principal or other scopes. It keeps the key's
// digest, not the key. nil when only id.Expires ends the credential (an
// OAuth token) or there is none (the open endpoint).
func (a *Authenticator) StillValid(header string, id Identity) func() bool {
	if id.Method != "key" || a == nil {
		return nil
	}
	_, cred, _ := strings.Cut(strings.TrimSpace(header), " ")
	d := sha256.Sum256([]byte(strings.TrimSpace(cred)))
	ks := a.Keys
	return func() bool {
		now, ok := ks.lookupDigest(d)
		return ok && now.Principal == id.Principal && slices.Equal(now.Scopes, id.Scopes)
	}
}

func unauthorized(code, desc string) *Failure {
	return &Failure{Status: 401, Challenge: Challenge{Error: code, Description: desc}}
}

// reason is a verifier's error as an error_description: its text (a
// TokenVerifier's errors are written for clients), bounded.
func reason(err error) string {
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// Require returns nil when id has scope, else the 403 insufficient_scope
// failure naming it.
func Require(id Identity, scope string) *Failure {
	if id.Has(scope) {
		return nil
	}
	return &Failure{Status: 403, Challenge: Challenge{Error: ErrorInsufficientScope, Scope: scope,
		Description: "the token lacks the " + scope + " scope"}}
}
