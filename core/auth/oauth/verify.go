package oauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// ErrInvalidToken is wrapped by every error [Verifier.Verify] returns for a
// token that must be refused (answer 401). Use [errors.As] with
// *[TokenError] to get the reason.
var ErrInvalidToken = errors.New("oauth: invalid token")

// TokenError is a refused token. Reason is a short fixed phrase ("expired",
// "wrong audience", …) safe to log and to send as a WWW-Authenticate
// error_description; it never contains token contents.
type TokenError struct {
	Reason string
}

func (e *TokenError) Error() string { return "oauth: invalid token: " + e.Reason }

// Unwrap returns [ErrInvalidToken].
func (e *TokenError) Unwrap() error { return ErrInvalidToken }

func invalid(reason string) error { return &TokenError{Reason: reason} }

// Verify checks token, a JWT access token in JWS compact serialization, and
// returns its claims. Refused tokens yield an error wrapping
// [ErrInvalidToken]; [ErrUnavailable] and context errors are the server's
// faults. Verify does no network I/O when the token's key is in a fresh
// JWKS.
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	sum := sha256.Sum256([]byte(token))
	if c, ok, err := v.cached(ctx, sum); ok || err != nil {
		return c, err
	}
	set := v.keys.Load() // before the check: a refresh during it makes the entry stale, never wrongly fresh
	c, err := v.verify(ctx, token)
	if err == nil {
		v.tokens.put(sum, &tokenEntry{claims: c, keys: set})
	}
	return c, err
}

// verify is Verify without the cache: the signature and every claim.
func (v *Verifier) verify(ctx context.Context, token string) (Claims, error) {
	jws, err := v.parse(token)
	if err != nil {
		return Claims{}, err
	}
	hdr := jws.Signatures[0].Header
	if err := checkType(hdr); err != nil {
		return Claims{}, err
	}
	k, err := v.key(ctx, hdr.KeyID, jose.SignatureAlgorithm(hdr.Algorithm))
	if err != nil {
		return Claims{}, err
	}
	payload, err := jws.Verify(k.pub)
	switch {
	case errors.Is(err, jose.ErrCryptoFailure):
		return Claims{}, invalid("bad signature")
	case err != nil: // such as an unsupported "crit" header
		return Claims{}, invalid("malformed token")
	}
	return v.claims(payload)
}

// parse checks the token's shape and size, then lets go-jose parse it with
// the algorithm allow-list.
func (v *Verifier) parse(token string) (*jose.JSONWebSignature, error) {
	switch {
	case token == "":
		return nil, invalid("missing token")
	case len(token) > maxToken:
		return nil, invalid("token too large")
	}
	switch strings.Count(token, ".") {
	case 2:
	case 4:
		return nil, invalid("encrypted tokens not accepted")
	default:
		return nil, invalid("malformed token")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; !base64url(c) && c != '.' {
			return nil, invalid("malformed token")
		}
	}
	jws, err := jose.ParseSignedCompact(token, v.algs)
	if err != nil {
		if _, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok {
			return nil, invalid("algorithm not allowed")
		}
		return nil, invalid("malformed token")
	}
	if len(jws.Signatures) != 1 {
		return nil, invalid("malformed token")
	}
	return jws, nil
}

func base64url(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// checkType refuses tokens whose "typ" header names something other than an
// access token or a generic JWT (RFC 9068 §2.1, RFC 8725 §3.11), such as an
// ID token or a logout token.
func checkType(h jose.Header) error {
	t, ok := h.ExtraHeaders[jose.HeaderType]
	if !ok {
		return nil
	}
	s, _ := t.(string)
	switch strings.ToLower(s) {
	case "at+jwt", "application/at+jwt", "jwt":
		return nil
	}
	return invalid("wrong token type")
}

// key selects the verification key for kid and alg. An unknown kid triggers
// one JWKS refresh (rate-limited and shared between callers) and a second
// lookup.
func (v *Verifier) key(ctx context.Context, kid string, alg jose.SignatureAlgorithm) (key, error) {
	set, err := v.current(ctx)
	if err != nil {
		return key{}, err
	}
	keys := set.lookup(kid)
	if len(keys) == 0 && kid != "" {
		if err := v.refresh(ctx); err != nil && ctx.Err() != nil {
			return key{}, fmt.Errorf("oauth: verify: %w", ctx.Err())
		}
		keys = v.keys.Load().lookup(kid)
	}
	if len(keys) == 0 {
		if kid == "" {
			return key{}, invalid("missing key id")
		}
		return key{}, invalid("unknown signing key")
	}
	for _, k := range keys {
		if (k.alg == "" || k.alg == alg) && fits(alg, k.pub) {
			return k, nil
		}
	}
	return key{}, invalid("algorithm does not match key")
}
