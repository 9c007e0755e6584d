package main

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// claims returns the RFC 9068 claims of t.
func (t *accessToken) claims(issuer string, extra map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range extra {
		c[k] = v
	}
	c["iss"] = issuer
	c["sub"] = t.subject
	c["aud"] = t.audience
	c["exp"] = t.expiry.Unix()
	c["iat"] = t.issued.Unix()
	c["nbf"] = t.issued.Unix()
	c["jti"] = t.id
	c["client_id"] = t.clientID
	c["scope"] = strings.Join(t.scopes, " ")
	return c
}

// tokenCrypto is the provider's op.Crypto. zitadel signs the JWT access
// tokens it makes itself with header typ "JWT" (op.SignerFromKey); RFC 9068
// asks for "at+jwt". So clients ask for bearer tokens, which zitadel makes
// with Encrypt("<token id>:<subject>"), and Encrypt answers with the signed
// JWT of that token. zitadel also makes authorization codes with Encrypt(<auth
// request id>): those get a random string, as the storage maps codes to
// requests itself.
type tokenCrypto struct{ s *storage }

func (c tokenCrypto) Encrypt(value string) (string, error) {
	id, _, _ := strings.Cut(value, ":")
	t := c.s.accessToken(id)
	if t == nil {
		return randomID(24), nil
	}
	var extra map[string]any
	if u := c.s.cfg.users[t.subject]; u != nil {
		extra = u.claims
	}
	return c.s.keys.sign(t.claims(c.s.issuer, extra), "")
}

// Decrypt fails: zitadel then verifies the access token as a JWT against the
// JWKS (userinfo, introspection, revocation).
func (tokenCrypto) Decrypt(string) (string, error) {
	return "", errors.New("access tokens are JWTs")
}

// resourceKey is the context key of the RFC 8707 resource parameters of a
// request. zitadel does not know the parameter and drops it when it decodes
// a request, so captureResources reads it before.
type resourceKey struct{}

func captureResources(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err == nil && len(r.Form["resource"]) > 0 {
			r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, r.Form["resource"]))
		}
		next.ServeHTTP(w, r)
	})
}

func resourcesFrom(ctx context.Context) []string {
	r, _ := ctx.Value(resourceKey{}).([]string)
	return r
}

// narrowResources returns the resources a token request asks for, which
// must be among those granted; with none asked for, it returns granted.
func narrowResources(ctx context.Context, granted []string) ([]string, error) {
	asked := resourcesFrom(ctx)
	for _, r := range asked {
		if !slices.Contains(granted, r) {
			return nil, errInvalidTarget("resource " + r + " was not granted")
		}
	}
	if len(asked) == 0 {
		return granted, nil
	}
	return asked, nil
}

// errInvalidTarget is RFC 8707's error, which zitadel has no constructor for.
func errInvalidTarget(description string) *oidc.Error {
	return &oidc.Error{ErrorType: "invalid_target", Description: description}
}
