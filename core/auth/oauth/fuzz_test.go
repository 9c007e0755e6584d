package oauth

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary strings to Verify. None may panic or verify,
// and every refusal is a TokenError that does not echo the input. The seeds
// include correctly signed tokens that are invalid (expired, wrong
// audience) and tokens signed by a key the AS never published; mutating
// them can't forge a signature. The fake clock never moves, so unknown
// kids never refetch and the loop does no network I/O.
func FuzzVerify(f *testing.F) {
	keys(f)
	as := newFakeAS(f, "/t", keyRSA.jwk(true), keyEC256.jwk(true), keyEd.jwk(false))
	v := verifier(f, as, &clock{t: epoch}, nil)
	c := goodClaims(as)
	for _, s := range []string{
		sign(f, keyRSA, "", false, with(c, "exp", epoch.Add(-time.Hour).Unix()), nil),
		sign(f, keyEC256, "", false, with(c, "aud", "other"), nil),
		sign(f, keyEd, "", false, with(c, "iss", "x"), map[string]any{"typ": "at+jwt"}),
		sign(f, keyEvil, "", false, c, nil),
		// NumericDates as strings (RFC 7519 wants numbers), correctly signed.
		sign(f, keyRSA, "", false, with(c, "exp", strconv.FormatInt(epoch.Add(time.Hour).Unix(), 10)), nil),
		sign(f, keyEC256, "", false, with(c, "nbf", strconv.FormatInt(epoch.Unix(), 10)), nil),
		sign(f, keyEd, "", false, with(c, "iat", strconv.FormatInt(epoch.Unix(), 10)), nil),
		sign(f, keyRSA, "", false, with(c, "exp", []any{epoch.Add(time.Hour).Unix()}), nil),
		sign(f, keyEvil, "", true, c, nil),
		hs256(c, "rsa-1", []byte("secret")),
		"", ".", "..", "a.b.c", "a.b.c.d.e", "eyJhbGciOiJub25lIn0.e30.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		claims, err := v.Verify(context.Background(), tok)
		if err == nil {
			t.Fatalf("token verified: %+v", claims)
		}
		te, ok := errors.AsType[*TokenError](err)
		if !ok || !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("error %v is not a TokenError", err)
		}
		if len(te.Reason) > 64 || len(tok) >= 16 && strings.Contains(te.Reason, tok) {
			t.Fatalf("reason %q is long or echoes the token", te.Reason)
		}
	})
}
