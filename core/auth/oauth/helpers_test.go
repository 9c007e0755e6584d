package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// testKey is a signing key generated for the tests.
type testKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

// jwk is the public JWK the fake AS publishes; setAlg adds "alg".
func (k testKey) jwk(setAlg bool) map[string]any {
	j := jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Use: "sig"}
	if setAlg {
		j.Algorithm = string(k.alg)
	}
	b, err := j.MarshalJSON()
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

var (
	keysOnce sync.Once
	keyRSA   testKey
	keyRSA2  testKey
	keyEC256 testKey
	keyEC384 testKey
	keyEd    testKey
	keyEvil  testKey // same kid as keyRSA, never published
)

func keys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		rsa1, _ := rsa.GenerateKey(rand.Reader, 2048)
		rsa2, _ := rsa.GenerateKey(rand.Reader, 2048)
		evil, _ := rsa.GenerateKey(rand.Reader, 2048)
		ec256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		keyRSA = testKey{"rsa-1", jose.RS256, rsa1}
		keyRSA2 = testKey{"rsa-2", jose.PS256, rsa2}
		keyEC256 = testKey{"ec-256", jose.ES256, ec256}
		keyEC384 = testKey{"ec-384", jose.ES384, ec384}
		keyEd = testKey{"ed-1", jose.EdDSA, ed}
		keyEvil = testKey{"rsa-1", jose.RS256, evil}
	})
}

// sign returns a compact JWS of claims signed by k with alg (k.alg when
// empty), kid k.kid (none when noKid) and the extra header fields.
func sign(t testing.TB, k testKey, alg jose.SignatureAlgorithm, noKid bool, claims map[string]any, hdr map[string]any) string {
	t.Helper()
	if alg == "" {
		alg = k.alg
	}
	var sk any = jose.JSONWebKey{Key: k.priv, KeyID: k.kid}
	if noKid {
		sk = k.priv
	}
	opts := &jose.SignerOptions{}
	for name, v := range hdr {
		opts = opts.WithHeader(jose.HeaderKey(name), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: sk}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawToken assembles a compact JWS from a header, claims and signature
// without go-jose, for tokens go-jose refuses to produce.
func rawToken(hdr, claims map[string]any, sig []byte) (string, string) {
	h, _ := json.Marshal(hdr)
	c, _ := json.Marshal(claims)
	input := b64(h) + "." + b64(c)
	return input, input + "." + b64(sig)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeAS serves AS metadata and a JWKS on 127.0.0.1.
type fakeAS struct {
	srv       *httptest.Server
	issuerSfx string // issuer path, e.g. "/tenant1"

	mu           sync.Mutex
	metaPaths    []string          // paths that serve metadata
	metaIssuer   string            // "" means the real issuer
	jwksURI      string            // "" means srv.URL+"/jwks"
	jwks         map[string]any    // the JWKS document
	cacheControl string            // on the JWKS response
	requests     []string          // every path requested
	override     map[string]string // path → raw body
	redirect     map[string]string // path → Location of a 302
	delay        time.Duration     // before answering /jwks

	jwksHits atomic.Int32
}

func newFakeAS(t testing.TB, issuerPath string, ks ...map[string]any) *fakeAS {
	t.Helper()
	as := &fakeAS{issuerSfx: issuerPath, override: map[string]string{}, redirect: map[string]string{}}
	as.metaPaths = []string{"/.well-known/oauth-authorization-server" + issuerPath}
	as.setKeys(ks...)
	as.srv = httptest.NewServer(http.HandlerFunc(as.serve))
	t.Cleanup(as.srv.Close)
	return as
}

func (as *fakeAS) issuer() string { return as.srv.URL + as.issuerSfx }

func (as *fakeAS) setKeys(ks ...map[string]any) {
	as.set(func(as *fakeAS) { as.jwks = map[string]any{"keys": ks} })
}

func (as *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	delay := as.delay
	as.mu.Unlock()
	if r.URL.Path == "/jwks" {
		time.Sleep(delay)
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	as.requests = append(as.requests, r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	if body, ok := as.override[r.URL.Path]; ok {
		_, _ = w.Write([]byte(body))
		return
	}
	if loc, ok := as.redirect[r.URL.Path]; ok {
		http.Redirect(w, r, loc, http.StatusFound)
		return
	}
	switch {
	case r.URL.Path == "/jwks":
		as.jwksHits.Add(1)
		if as.cacheControl != "" {
			w.Header().Set("Cache-Control", as.cacheControl)
		}
		_ = json.NewEncoder(w).Encode(as.jwks)
	case slices.Contains(as.metaPaths, r.URL.Path):
		_ = json.NewEncoder(w).Encode(as.metadata())
	default:
		http.NotFound(w, r)
	}
}

func (as *fakeAS) metadata() map[string]any {
	iss, jwks := as.metaIssuer, as.jwksURI
	if iss == "" {
		iss = as.issuer()
	}
	if jwks == "" {
		jwks = as.srv.URL + "/jwks"
	}
	return map[string]any{
		"issuer":                           iss,
		"authorization_endpoint":           as.srv.URL + "/authorize",
		"token_endpoint":                   as.srv.URL + "/token",
		"registration_endpoint":            as.srv.URL + "/register",
		"jwks_uri":                         jwks,
		"scopes_supported":                 []string{"blob:read", "blob:write"},
		"code_challenge_methods_supported": []string{"S256"},
	}
}

// set changes the fake's state under its lock.
func (as *fakeAS) set(f func(as *fakeAS)) {
	as.mu.Lock()
	defer as.mu.Unlock()
	f(as)
}

func (as *fakeAS) paths() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.requests)
}

const testAudience = "https://blob.example.com/mcp"

// verifier builds a Verifier against as with the fake clock c.
func verifier(t testing.TB, as *fakeAS, c *clock, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{Issuer: as.issuer(), Audience: testAudience}
	if mod != nil {
		mod(&cfg)
	}
	v, err := newVerifier(context.Background(), cfg, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// goodClaims are valid claims at epoch for as.
func goodClaims(as *fakeAS) map[string]any {
	return map[string]any{
		"iss":       as.issuer(),
		"aud":       testAudience,
		"sub":       "user-1",
		"exp":       epoch.Add(time.Hour).Unix(),
		"iat":       epoch.Add(-time.Minute).Unix(),
		"jti":       "id-1",
		"client_id": "client-1",
		"scope":     "blob:write blob:read",
	}
}

// with returns a copy of m with the changes; a nil value deletes the key.
func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}
