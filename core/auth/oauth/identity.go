package oauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/core/auth"
)

// VerifyToken verifies token and returns the caller it names, so a
// Verifier is an [auth.TokenVerifier]: Principal is the tenant claim,
// Scopes the token's scopes.
func (v *Verifier) VerifyToken(ctx context.Context, token string) (auth.Identity, error) {
	c, err := v.Verify(ctx, token)
	if errors.Is(err, ErrUnavailable) {
		return auth.Identity{}, fmt.Errorf("%w: %w", auth.ErrUnavailable, err)
	}
	if err != nil {
		return auth.Identity{}, err
	}
	return auth.Identity{Principal: c.Principal, Scopes: c.Scopes, Method: "oauth"}, nil
}
