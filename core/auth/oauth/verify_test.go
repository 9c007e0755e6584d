package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// standardAS publishes keyRSA (with alg), keyRSA2 (without alg), both EC
// keys and the Ed25519 key for issuer path /tenant1.
func standardAS(t testing.TB) *fakeAS {
	keys(t)
	return newFakeAS(t, "/tenant1", keyRSA.jwk(true), keyRSA2.jwk(false),
		keyEC256.jwk(true), keyEC384.jwk(true), keyEd.jwk(true))
}

// hs256 MACs a token with secret, the classic key-confusion attack.
func hs256(claims map[string]any, kid string, secret []byte) string {
	input, _ := rawToken(map[string]any{"alg": "HS256", "kid": kid, "typ": "JWT"}, claims, nil)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(input))
	return input + "." + b64(mac.Sum(nil))
}

type verifyCase struct {
	name  string
	token func(t testing.TB, as *fakeAS, c map[string]any) string
	mod   func(*Config)
	want  string // reason; "" means valid
	check func(t *testing.T, c Claims)
}

// signed returns a token func signing the (modified) claims with k.
func signed(k testKey, alg jose.SignatureAlgorithm, hdr map[string]any, kv ...any) tokenFunc {
	return func(t testing.TB, as *fakeAS, c map[string]any) string {
		return sign(t, k, alg, false, with(c, kv...), hdr)
	}
}

// tokenFunc makes a test token from valid claims c.
type tokenFunc = func(t testing.TB, as *fakeAS, c map[string]any) string

func literal(s string) tokenFunc {
	return func(testing.TB, *fakeAS, map[string]any) string { return s }
}

func runCases(t *testing.T, cases []verifyCase) {
	as := standardAS(t)
	clk := &clock{t: epoch}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := verifier(t, as, clk, tc.mod)
			got, err := v.Verify(context.Background(), tc.token(t, as, goodClaims(as)))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if tc.check != nil {
					tc.check(t, got)
				}
				return
			}
			te, ok := errors.AsType[*TokenError](err)
			if !ok || !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("Verify error = %v, want TokenError %q", err, tc.want)
			}
			if te.Reason != tc.want {
				t.Fatalf("reason = %q, want %q", te.Reason, tc.want)
			}
		})
	}
}

func TestVerifyKeysAndAlgorithms(t *testing.T) {
	keys(t)
	pubDER, _ := x509.MarshalPKIXPublicKey(keyRSA.priv.Public())
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	rsaKidOnEC := testKey{"rsa-1", jose.ES256, keyEC256.priv}
	ec256KidOnP384 := testKey{"ec-256", jose.ES384, keyEC384.priv}
	runCases(t, []verifyCase{
		{name: "RS256", token: signed(keyRSA, "", nil)},
		{name: "PS256 key without alg", token: signed(keyRSA2, "", nil)},
		{name: "RS512 key without alg", token: signed(keyRSA2, jose.RS512, nil)},
		{name: "ES256", token: signed(keyEC256, "", nil)},
		{name: "ES384", token: signed(keyEC384, "", nil)},
		{name: "EdDSA", token: signed(keyEd, "", nil)},
		{name: "empty", token: literal(""), want: "missing token"},
		{name: "one part", token: literal("abc"), want: "malformed token"},
		{name: "two parts", token: literal("abc.def"), want: "malformed token"},
		{name: "four parts", token: literal("a.b.c.d"), want: "malformed token"},
		{name: "JWE", token: literal("eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d"), want: "encrypted tokens not accepted"},
		{name: "too large", token: literal(strings.Repeat("a", maxToken) + ".b.c"), want: "token too large"},
		{name: "bad characters", token: literal("a+b.c/d.e="), want: "malformed token"},
		{name: "whitespace", token: func(t testing.TB, as *fakeAS, c map[string]any) string {
			return " " + sign(t, keyRSA, "", false, c, nil)
		}, want: "malformed token"},
		{name: "bad base64 header", token: literal("a.b.c"), want: "malformed token"},
		{name: "JSON serialization", token: literal(`{"payload":"e30","signatures":[]}`), want: "malformed token"},
		{name: "alg none", token: func(t testing.TB, as *fakeAS, c map[string]any) string {
			_, tok := rawToken(map[string]any{"alg": "none"}, c, nil)
			return tok
		}, want: "algorithm not allowed"},
		{name: "alg none with kid", token: func(t testing.TB, as *fakeAS, c map[string]any) string {
			_, tok := rawToken(map[string]any{"alg": "none", "kid": "rsa-1"}, c, nil)
			return tok
		}, want: "algorithm not allowed"},
		{name: "HS256 with public key DER", token: func(t testing.TB, as *fakeAS, c map[string]any) string { return hs256(c, "rsa-1", pubDER) }, want: "algorithm not allowed"},
		{name: "HS256 with public key PEM", token: func(t testing.TB, as *fakeAS, c map[string]any) string { return hs256(c, "rsa-1", pubPEM) }, want: "algorithm not allowed"},
		{name: "alg outside configured subset", token: signed(keyEC256, "", nil), mod: func(c *Config) { c.Algorithms = []string{"RS256"} }, want: "algorithm not allowed"},
		{name: "header alg differs from JWK alg", token: signed(keyRSA, jose.PS256, nil), want: "algorithm does not match key"},
		{name: "EC alg on RSA key", token: signed(rsaKidOnEC, "", nil), want: "algorithm does not match key"},
		{name: "ES384 on P-256 key", token: signed(ec256KidOnP384, "", nil), want: "algorithm does not match key"},
		{name: "signed by unpublished key", token: signed(keyEvil, "", nil), want: "bad signature"},
		{name: "no kid with several keys", token: func(t testing.TB, as *fakeAS, c map[string]any) string { return sign(t, keyRSA, "", true, c, nil) }, want: "missing key id"},
		{name: "tampered payload", token: func(t testing.TB, as *fakeAS, c map[string]any) string {
			parts := strings.Split(sign(t, keyRSA, "", false, c, nil), ".")
			parts[1] = b64([]byte(`{"sub":"admin"}`))
			return strings.Join(parts, ".")
		}, want: "bad signature"},
		{name: "unknown crit header", token: signed(keyRSA, "", map[string]any{"crit": []string{"x-must"}, "x-must": 1}), want: "malformed token"},
		{name: "typ at+jwt", token: signed(keyRSA, "", map[string]any{"typ": "at+jwt"})},
		{name: "typ application/AT+JWT", token: signed(keyRSA, "", map[string]any{"typ": "application/AT+JWT"})},
		{name: "typ JWT", token: signed(keyRSA, "", map[string]any{"typ": "JWT"})},
		{name: "typ id_token", token: signed(keyRSA, "", map[string]any{"typ": "id_token+jwt"}), want: "wrong token type"},
		{name: "typ logout", token: signed(keyRSA, "", map[string]any{"typ": "logout+jwt"}), want: "wrong token type"},
		{name: "typ not a string", token: signed(keyRSA, "", map[string]any{"typ": 1}), want: "wrong token type"},
	})
}

func TestVerifyClaims(t *testing.T) {
	keys(t)
	runCases(t, []verifyCase{
		{name: "valid", token: signed(keyRSA, "", nil), check: func(t *testing.T, c Claims) {
			want := Claims{Subject: "user-1", Principal: "user-1", Scopes: []string{"blob:read", "blob:write"},
				ClientID: "client-1", Expiry: epoch.Add(time.Hour), ID: "id-1"}
			if !c.Expiry.Equal(want.Expiry) || c.Subject != want.Subject || c.Principal != want.Principal ||
				!slices.Equal(c.Scopes, want.Scopes) || c.ClientID != want.ClientID || c.ID != want.ID {
				t.Fatalf("claims = %+v, want %+v", c, want)
			}
		}},
		{name: "expired", token: signed(keyRSA, "", nil, "exp", epoch.Add(-time.Minute).Unix()), want: "expired"},
		{name: "exp at leeway edge", token: signed(keyRSA, "", nil, "exp", epoch.Add(-DefaultLeeway).Unix()), want: "expired"},
		{name: "expired within leeway", token: signed(keyRSA, "", nil, "exp", epoch.Add(-20*time.Second).Unix())},
		{name: "missing exp", token: signed(keyRSA, "", nil, "exp", nil), want: "missing expiry"},
		{name: "exp string", token: signed(keyRSA, "", nil, "exp", "tomorrow"), want: "malformed exp claim"},
		{name: "exp negative", token: signed(keyRSA, "", nil, "exp", -1), want: "malformed exp claim"},
		// RFC 7519 §2: a NumericDate is a JSON number, never a string of digits.
		{name: "exp numeric string", token: signed(keyRSA, "", nil, "exp", strconv.FormatInt(epoch.Add(time.Hour).Unix(), 10)), want: "malformed exp claim"},
		{name: "exp padded numeric string", token: signed(keyRSA, "", nil, "exp", " 1795755174"), want: "malformed exp claim"},
		{name: "exp true", token: signed(keyRSA, "", nil, "exp", true), want: "malformed exp claim"},
		{name: "exp array", token: signed(keyRSA, "", nil, "exp", []int64{epoch.Add(time.Hour).Unix()}), want: "malformed exp claim"},
		{name: "exp object", token: signed(keyRSA, "", nil, "exp", map[string]int64{"n": 1}), want: "malformed exp claim"},
		{name: "nbf numeric string", token: signed(keyRSA, "", nil, "nbf", strconv.FormatInt(epoch.Add(-time.Minute).Unix(), 10)), want: "malformed nbf claim"},
		{name: "iat numeric string", token: signed(keyRSA, "", nil, "iat", strconv.FormatInt(epoch.Add(-time.Minute).Unix(), 10)), want: "malformed iat claim"},
		{name: "iat fractional string", token: signed(keyRSA, "", nil, "iat", "1777636740.5"), want: "malformed iat claim"},
		{name: "nbf false", token: signed(keyRSA, "", nil, "nbf", false), want: "malformed nbf claim"},
		{name: "exp with exponent", token: signed(keyRSA, "", nil, "exp", json.Number("1.7776392e9"))},
		{name: "exp huge", token: signed(keyRSA, "", nil, "exp", 1e300), want: "malformed exp claim"},
		{name: "exp fractional", token: signed(keyRSA, "", nil, "exp", float64(epoch.Unix())+3600.5)},
		{name: "nbf future", token: signed(keyRSA, "", nil, "nbf", epoch.Add(time.Minute).Unix()), want: "not yet valid"},
		{name: "nbf within leeway", token: signed(keyRSA, "", nil, "nbf", epoch.Add(20*time.Second).Unix())},
		{name: "iat future", token: signed(keyRSA, "", nil, "iat", epoch.Add(time.Minute).Unix()), want: "issued in the future"},
		{name: "iat missing", token: signed(keyRSA, "", nil, "iat", nil)},
		{name: "wrong iss", token: signed(keyRSA, "", nil, "iss", "https://evil.example/tenant1"), want: "wrong issuer"},
		{name: "iss trailing slash", token: func(t testing.TB, as *fakeAS, c map[string]any) string {
			return sign(t, keyRSA, "", false, with(c, "iss", as.issuer()+"/"), nil)
		}, want: "wrong issuer"},
		{name: "missing iss", token: signed(keyRSA, "", nil, "iss", nil), want: "wrong issuer"},
		{name: "wrong aud", token: signed(keyRSA, "", nil, "aud", "https://other.example/mcp"), want: "wrong audience"},
		{name: "aud array", token: signed(keyRSA, "", nil, "aud", []string{"x", testAudience})},
		{name: "aud array without us", token: signed(keyRSA, "", nil, "aud", []string{"x", "y"}), want: "wrong audience"},
		{name: "aud number", token: signed(keyRSA, "", nil, "aud", 5), want: "malformed aud claim"},
		{name: "missing aud", token: signed(keyRSA, "", nil, "aud", nil), want: "missing audience"},
		{name: "claims not an object", token: func(t testing.TB, as *fakeAS, c map[string]any) string { return signRaw(t, keyRSA, []byte(`[1]`)) }, want: "malformed claims"},
		{name: "claims null", token: func(t testing.TB, as *fakeAS, c map[string]any) string { return signRaw(t, keyRSA, []byte(`null`)) }, want: "malformed claims"},
	})
}

func TestVerifyScopesAndPrincipal(t *testing.T) {
	keys(t)
	tenant := func(c *Config) { c.TenantClaim = "tenant" }
	runCases(t, []verifyCase{
		{name: "scp array", token: signed(keyRSA, "", nil, "scope", nil, "scp", []string{"b", "a", "b"}), check: scopesAre("a", "b")},
		{name: "scp string", token: signed(keyRSA, "", nil, "scope", nil, "scp", "b a"), check: scopesAre("a", "b")},
		{name: "scope and scp", token: signed(keyRSA, "", nil, "scope", " c  a ", "scp", []string{"b", "a"}), check: scopesAre("a", "b", "c")},
		{name: "no scope", token: signed(keyRSA, "", nil, "scope", nil), check: scopesAre()},
		{name: "scope array", token: signed(keyRSA, "", nil, "scope", []string{"a"}), want: "malformed scope claim"},
		{name: "scp number", token: signed(keyRSA, "", nil, "scp", 3), want: "malformed scp claim"},
		{name: "azp as client id", token: signed(keyRSA, "", nil, "client_id", nil, "azp", "c2"), check: func(t *testing.T, c Claims) {
			if c.ClientID != "c2" {
				t.Fatalf("ClientID = %q", c.ClientID)
			}
		}},
		{name: "sub missing", token: signed(keyRSA, "", nil, "sub", nil), want: `missing principal claim "sub"`},
		{name: "sub empty", token: signed(keyRSA, "", nil, "sub", ""), want: `principal claim "sub" is empty`},
		{name: "sub number", token: signed(keyRSA, "", nil, "sub", 7), want: "malformed sub claim"},
		{name: "tenant claim", mod: tenant, token: signed(keyRSA, "", nil, "tenant", "acme"), check: func(t *testing.T, c Claims) {
			if c.Principal != "acme" || c.Subject != "user-1" {
				t.Fatalf("Principal %q Subject %q", c.Principal, c.Subject)
			}
		}},
		{name: "tenant claim missing", mod: tenant, token: signed(keyRSA, "", nil), want: `missing principal claim "tenant"`},
		{name: "tenant claim null", mod: tenant, token: signed(keyRSA, "", nil, "tenant", nil), want: `missing principal claim "tenant"`},
		{name: "tenant claim not string", mod: tenant, token: signed(keyRSA, "", nil, "tenant", []string{"a"}), want: `principal claim "tenant" is not a string`},
		{name: "tenant claim empty", mod: tenant, token: signed(keyRSA, "", nil, "tenant", ""), want: `principal claim "tenant" is empty`},
	})
}

func scopesAre(want ...string) func(*testing.T, Claims) {
	return func(t *testing.T, c Claims) {
		if !slices.Equal(c.Scopes, want) {
			t.Fatalf("Scopes = %q, want %q", c.Scopes, want)
		}
	}
}

// signRaw signs an arbitrary payload with k.
func signRaw(t testing.TB, k testKey, payload []byte) string {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := obj.CompactSerialize()
	return tok
}

// TestKeyConfusion checks that the key selection itself, not only the
// allow-list, refuses an HMAC algorithm on an RSA key.
func TestKeyConfusion(t *testing.T) {
	as := standardAS(t)
	v := verifier(t, as, &clock{t: epoch}, nil)
	for _, alg := range []jose.SignatureAlgorithm{jose.HS256, "none", jose.ES256} {
		_, err := v.key(context.Background(), "rsa-1", alg)
		if te, ok := errors.AsType[*TokenError](err); !ok || te.Reason != "algorithm does not match key" {
			t.Errorf("key(rsa-1, %s) = %v", alg, err)
		}
	}
}

func TestNoKidSingleKey(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyEd.jwk(false))
	v := verifier(t, as, &clock{t: epoch}, nil)
	if _, err := v.Verify(context.Background(), sign(t, keyEd, "", true, goodClaims(as), nil)); err != nil {
		t.Fatalf("no-kid token with one key: %v", err)
	}
	if _, err := v.Verify(context.Background(), sign(t, keyEd, "", false, goodClaims(as), nil)); err != nil {
		t.Fatalf("kid token with one key: %v", err)
	}
}

// TestReasonsOmitToken checks that no refusal echoes the token.
func TestReasonsOmitToken(t *testing.T) {
	as := standardAS(t)
	v := verifier(t, as, &clock{t: epoch}, nil)
	tok := sign(t, keyEvil, "", false, goodClaims(as), nil)
	for _, s := range []string{tok, tok + "x", strings.Replace(tok, ".", "..", 1)} {
		_, err := v.Verify(context.Background(), s)
		parts := strings.Split(s, ".")
		for _, p := range parts {
			if len(p) > 8 && strings.Contains(err.Error(), p) {
				t.Fatalf("error %q contains token text", err)
			}
		}
	}
}

// TestVerifyTokenExpires: the identity of a token says when Verify starts
// refusing it (exp plus the leeway), so what outlives the request (a
// notification stream) can end then.
func TestVerifyTokenExpires(t *testing.T) {
	as := standardAS(t)
	v := verifier(t, as, &clock{t: epoch}, func(c *Config) { c.Leeway = 10 * time.Second })
	id, err := v.VerifyToken(context.Background(), sign(t, keyRSA, "", false, goodClaims(as), nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch.Add(time.Hour + 10*time.Second); !id.Expires.Equal(want) {
		t.Fatalf("Expires = %v, want %v (exp plus the leeway)", id.Expires, want)
	}
}
