package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/auth/oauth"
	"github.com/mcpblob/mcpblob/core/server/blobsvc/uploadpage"
)

// oauthVerifier discovers the authorization server of --oauth-issuer and
// returns its token verifier (nil without --oauth-issuer). A server that
// cannot reach its authorization server at start refuses to start.
func oauthVerifier(ctx context.Context, cfg Config, logger *slog.Logger) (*oauth.Verifier, error) {
	if cfg.OAuthIssuer == "" {
		return nil, nil
	}
	aud := cfg.OAuthAudience
	if aud == "" {
		aud = auth.CanonicalResource(cfg.PublicURL)
	}
	v, err := oauth.New(ctx, oauth.Config{Issuer: cfg.OAuthIssuer, Audience: aud, TenantClaim: cfg.TenantClaim,
		QuotaClaim: cfg.OAuthQuotaClaim, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("--oauth-issuer: %w", err)
	}
	return v, nil
}

// oauthLogin is the upload page's sign-in at the authorization server
// (nil without --oauth-client-id).
func oauthLogin(cfg Config, v *oauth.Verifier) *uploadpage.LoginConfig {
	if v == nil || cfg.OAuthClientID == "" {
		return nil
	}
	md := v.Metadata()
	return &uploadpage.LoginConfig{ClientID: cfg.OAuthClientID, ClientSecret: cfg.OAuthClientSecret,
		AuthorizationEndpoint: md.AuthorizationEndpoint, TokenEndpoint: md.TokenEndpoint}
}

// tokenVerifier is v as a server option: nil stays a nil interface.
func tokenVerifier(v *oauth.Verifier) auth.TokenVerifier {
	if v == nil {
		return nil
	}
	return v
}
