package main

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// authRequest is an authorization request waiting for, or done with, the
// login; it implements op.AuthRequest.
type authRequest struct {
	id, clientID, redirectURI, state, nonce string
	responseType                            oidc.ResponseType
	responseMode                            oidc.ResponseMode
	challenge                               *oidc.CodeChallenge
	scopes                                  []string // requested; the granted ones once done
	resources                               []string // RFC 8707, or the default audience
	subject                                 string
	authTime                                time.Time
	done                                    bool
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return []string{a.clientID} } // of the ID token
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.done }

// refreshGrant is what a refresh token stands for; it implements
// op.RefreshTokenRequest. The storage hands out copies, so narrowing the
// scopes of one refresh request (SetCurrentScopes) keeps the grant whole.
type refreshGrant struct {
	token, subject, clientID string
	granted, scopes          []string
	resources                []string
	authTime, expiry         time.Time
}

func (g *refreshGrant) GetAMR() []string            { return []string{"pwd"} }
func (g *refreshGrant) GetAudience() []string       { return []string{g.clientID} }
func (g *refreshGrant) GetAuthTime() time.Time      { return g.authTime }
func (g *refreshGrant) GetClientID() string         { return g.clientID }
func (g *refreshGrant) GetScopes() []string         { return g.scopes }
func (g *refreshGrant) GetSubject() string          { return g.subject }
func (g *refreshGrant) SetCurrentScopes(s []string) { g.scopes = s }

// accessToken is an issued access token; tokenCrypto turns it into its JWT.
type accessToken struct {
	id, subject, clientID string
	audience, scopes      []string
	issued, expiry        time.Time
}
