package oauth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

func TestUsableKey(t *testing.T) {
	keys(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	privJWK, _ := jose.JSONWebKey{Key: keyRSA.priv, KeyID: "p"}.MarshalJSON()
	smallJWK, _ := jose.JSONWebKey{Key: &small.PublicKey, KeyID: "s"}.MarshalJSON()
	set := func(k map[string]any, kv ...any) string {
		b, _ := json.Marshal(with(k, kv...))
		return string(b)
	}
	rsaK, ecK := keyRSA.jwk(false), keyEC256.jwk(false)
	for _, tc := range []struct {
		name, jwk string
		ok        bool
	}{
		{"RSA", set(rsaK), true},
		{"RSA use sig", set(rsaK, "use", "sig"), true},
		{"RSA no use", set(rsaK, "use", nil), true},
		{"RSA use enc", set(rsaK, "use", "enc"), false},
		{"key_ops verify", set(rsaK, "key_ops", []string{"verify"}), true},
		{"key_ops encrypt", set(rsaK, "key_ops", []string{"encrypt"}), false},
		{"alg RS256", set(rsaK, "alg", "RS256"), true},
		{"alg HS256 on RSA", set(rsaK, "alg", "HS256"), false},
		{"alg RSA-OAEP", set(rsaK, "alg", "RSA-OAEP"), false},
		{"alg ES256 on RSA", set(rsaK, "alg", "ES256"), false},
		{"EC alg ES384 on P-256", set(ecK, "alg", "ES384"), false},
		{"EC", set(ecK), true},
		{"Ed25519", set(keyEd.jwk(false)), true},
		{"RSA private", string(privJWK), false},
		{"RSA 1024", string(smallJWK), false},
		{"oct", `{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0","kid":"h"}`, false},
		{"unknown kty", `{"kty":"XYZ","kid":"x"}`, false},
		{"not an object", `[]`, false},
	} {
		_, ok := usableKey(json.RawMessage(tc.jwk), asymmetric)
		if ok != tc.ok {
			t.Errorf("%s: usable = %v, want %v", tc.name, ok, tc.ok)
		}
	}
	// A key whose only fitting algorithm is outside a narrowed allow-list.
	if _, ok := usableKey(json.RawMessage(set(ecK)), []jose.SignatureAlgorithm{jose.RS256}); ok {
		t.Error("EC key usable with an RS256-only allow-list")
	}
}

// TestJWKSSkipsUnusable checks that one odd key does not spoil the set.
func TestJWKSSkipsUnusable(t *testing.T) {
	keys(t)
	doc, _ := json.Marshal(map[string]any{"keys": []any{
		map[string]any{"kty": "XYZ"}, with(keyRSA.jwk(false), "use", "enc"), keyEd.jwk(true),
	}})
	s, skipped, err := parseJWKS(doc, asymmetric)
	if err != nil || skipped != 2 || s.n != 1 || s.only == nil || s.only.kid != keyEd.kid {
		t.Fatalf("parseJWKS = %+v, %d, %v", s, skipped, err)
	}
}
