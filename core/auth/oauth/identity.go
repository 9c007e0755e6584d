package oauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/core/auth"
)

// VerifyToken verifies token and returns the caller it names, so a
// Verifier is an [auth.TokenVerifier]: Principal is the tenant claim,
// Scopes the token's scopes, Expires when Verify starts refusing it (exp
// plus the leeway). A refusal's error text is what a client may
// read ("invalid token: expired"); a failure that is not the token's says
// no more than that.
func (v *Verifier) VerifyToken(ctx context.Context, token string) (auth.Identity, error) {
	c, err := v.Verify(ctx, token)
	var te *TokenError
	switch {
	case errors.Is(err, ErrUnavailable):
		return auth.Identity{}, fmt.Errorf("%w: %w", auth.ErrUnavailable, err)
	case errors.As(err, &te):
		return auth.Identity{}, errors.New("invalid token: " + te.Reason)
	case err != nil:
		return auth.Identity{}, errors.New("the token could not be verified")
	}
	return auth.Identity{Principal: c.Principal, Scopes: c.Scopes, Method: "oauth", Expires: c.Expiry.Add(v.cfg.Leeway),
		Quota: c.Quota}, nil
}
