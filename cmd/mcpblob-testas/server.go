package main

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// newHandler builds the authorization server for issuer: zitadel's OpenID
// Provider under the issuer's path, the login page, the RFC 8414 metadata
// route and the /test/ endpoints.
func newHandler(cfg *config, issuer string) (http.Handler, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(u.Path, "/")
	keys, err := newKeyring(cfg.alg)
	if err != nil {
		return nil, err
	}
	s := newStorage(cfg, issuer, keys)
	for _, c := range cfg.clients {
		c.loginURL, c.scopes = issuer+"/login", cfg.scopes
	}
	provider, err := op.NewProvider(&op.Config{
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       cfg.scopes,
	}, s, op.StaticIssuer(issuer),
		op.WithAllowInsecure(),
		op.WithCrypto(tokenCrypto{s}),
		op.WithHttpInterceptors(captureResources))
	if err != nil {
		return nil, err
	}
	callback := provider.AuthorizationEndpoint().Absolute(issuer) + "/callback"
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, provider))
	mux.Handle(prefix+"/login", loginHandler(s, issuer+"/login", callback))
	if !cfg.noRFC8414 {
		mux.Handle("/.well-known/oauth-authorization-server"+prefix, metadataHandler(provider, issuer))
	}
	adminRoutes(mux, s)
	return mux, nil
}

// metadataHandler serves RFC 8414 authorization server metadata: zitadel
// serves only OpenID Connect discovery, whose document it is.
func metadataHandler(p *op.Provider, issuer string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := op.ContextWithIssuer(r.Context(), issuer)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		op.Discover(w, op.CreateDiscoveryConfig(ctx, p, p.Storage()))
	}
}
