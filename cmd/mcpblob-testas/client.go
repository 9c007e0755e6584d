package main

import (
	"net/url"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// client is a -client registration; it implements op.Client.
//
// A client without a secret is public: a native application to zitadel,
// which accepts its loopback redirect URIs on any port (RFC 8252 §7.3) and
// requires PKCE. A client with a secret is confidential (a web application:
// redirect URIs must match exactly) and may send the secret with
// client_secret_basic or client_secret_post.
type client struct {
	id, secret string
	redirects  []string
	loginURL   string // the login page; the auth request id is appended
	scopes     []string
}

func (c *client) public() bool { return c.secret == "" }

func (c *client) GetID() string                    { return c.id }
func (c *client) RedirectURIs() []string           { return c.redirects }
func (c *client) PostLogoutRedirectURIs() []string { return nil }
func (c *client) LoginURL(id string) string        { return c.loginURL + "?id=" + url.QueryEscape(id) }
func (c *client) IDTokenLifetime() time.Duration   { return time.Hour }
func (c *client) DevMode() bool                    { return false }
func (c *client) ClockSkew() time.Duration         { return 0 }
func (c *client) IsScopeAllowed(s string) bool     { return slices.Contains(c.scopes, s) }

func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }

// AccessTokenType is bearer so that zitadel hands the token to tokenCrypto,
// which signs the RFC 9068 JWT (see tokens.go).
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }

func (c *client) ApplicationType() op.ApplicationType {
	if c.public() {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}

func (c *client) AuthMethod() oidc.AuthMethod {
	if c.public() {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}

func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}

func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
