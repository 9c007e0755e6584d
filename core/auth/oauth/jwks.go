package oauth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// minRSABits is the smallest RSA modulus accepted (RFC 7518 §3.3).
const minRSABits = 2048

// key is one usable verification key from the JWKS.
type key struct {
	kid string
	alg jose.SignatureAlgorithm // the JWK's "alg", or "" when it sets none
	pub any                     // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// keySet is an immutable JWKS snapshot.
type keySet struct {
	byKid   map[string][]key
	n       int       // usable keys
	only    *key      // the single usable key when n == 1
	fetched time.Time // when it was fetched
	expires time.Time // when it must be fetched again
}

// lookup returns the keys a token with this kid may be verified with: those
// with the kid, or for an empty kid the one key of a single-key set.
func (s *keySet) lookup(kid string) []key {
	if kid == "" {
		if s.only != nil {
			return []key{*s.only}
		}
		return nil
	}
	return s.byKid[kid]
}

// parseJWKS builds a key set from a JWKS document, keeping only public
// signing keys usable with an algorithm in algs. It fails when the document
// is malformed, has more than maxKeys keys, or has no usable key.
func parseJWKS(body []byte, algs []jose.SignatureAlgorithm) (*keySet, int, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, 0, fmt.Errorf("decode JSON: %w", err)
	}
	if len(doc.Keys) > maxKeys {
		return nil, 0, fmt.Errorf("%d keys, more than %d", len(doc.Keys), maxKeys)
	}
	s := &keySet{byKid: make(map[string][]key)}
	skipped := 0
	for _, raw := range doc.Keys {
		k, ok := usableKey(raw, algs)
		if !ok {
			skipped++
			continue
		}
		s.byKid[k.kid] = append(s.byKid[k.kid], k)
		s.n++
		s.only = &k
	}
	if s.n == 0 {
		return nil, skipped, errors.New("no usable signing key")
	}
	if s.n != 1 {
		s.only = nil
	}
	return s, skipped, nil
}

// usableKey parses one JWK and reports whether it may verify tokens: a
// public RSA (≥ 2048 bits), EC (P-256/384/521) or Ed25519 key whose "use"
// is absent or "sig", whose "key_ops" is absent or has "verify", and whose
// "alg", if set, is allowed and fits the key.
func usableKey(raw json.RawMessage, algs []jose.SignatureAlgorithm) (key, bool) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return key{}, false
	}
	var extra struct {
		KeyOps []string `json:"key_ops"`
	}
	if json.Unmarshal(raw, &extra) != nil ||
		(extra.KeyOps != nil && !slices.Contains(extra.KeyOps, "verify")) {
		return key{}, false
	}
	if jwk.Use != "" && jwk.Use != "sig" {
		return key{}, false
	}
	k := key{kid: jwk.KeyID, alg: jose.SignatureAlgorithm(jwk.Algorithm), pub: jwk.Key}
	if k.alg != "" && (!slices.Contains(algs, k.alg) || !fits(k.alg, k.pub)) {
		return key{}, false
	}
	if k.alg == "" && !slices.ContainsFunc(algs, func(a jose.SignatureAlgorithm) bool { return fits(a, k.pub) }) {
		return key{}, false
	}
	return k, true
}

// fits reports whether pub is the right kind of public key for alg; private
// and symmetric keys never fit.
func fits(alg jose.SignatureAlgorithm, pub any) bool {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return p.N.BitLen() >= minRSABits
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return p.Curve == elliptic.P256()
		case jose.ES384:
			return p.Curve == elliptic.P384()
		case jose.ES512:
			return p.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// cacheMaxAge reads a Cache-Control max-age (no-cache and no-store count as
// zero); ok is false when the header sets neither.
func cacheMaxAge(h http.Header) (d time.Duration, ok bool) {
	for _, v := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(name) {
			case "no-cache", "no-store":
				return 0, true
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64)
				if err == nil && n >= 0 {
					return time.Duration(min(n, 1<<31)) * time.Second, true
				}
			}
		}
	}
	return 0, false
}
