package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// signingKey is the private key tokens are signed with; it implements
// op.SigningKey.
type signingKey struct {
	id      string
	alg     jose.SignatureAlgorithm
	private crypto.Signer
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *signingKey) Key() any                                    { return k.private }
func (k *signingKey) ID() string                                  { return k.id }

// publicKey is the JWKS entry of a signingKey; it implements op.Key.
type publicKey struct {
	id  string
	alg jose.SignatureAlgorithm
	key crypto.PublicKey
}

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return k.alg }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.key }

// keyring holds the one current signing key. Rotation replaces it, so the
// JWKS no longer lists the old one.
type keyring struct {
	mu  sync.Mutex
	key *signingKey
}

func newKeyring(alg string) (*keyring, error) {
	k, err := newSigningKey(jose.SignatureAlgorithm(alg))
	if err != nil {
		return nil, err
	}
	return &keyring{key: k}, nil
}

func newSigningKey(alg jose.SignatureAlgorithm) (*signingKey, error) {
	var private crypto.Signer
	var err error
	if alg == jose.ES256 {
		private, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		private, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		return nil, err
	}
	return &signingKey{id: randomID(8), alg: alg, private: private}, nil
}

func (r *keyring) current() *signingKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.key
}

// rotate makes a new key current and returns its kid.
func (r *keyring) rotate() (string, error) {
	k, err := newSigningKey(r.current().alg)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.key = k
	r.mu.Unlock()
	return k.id, nil
}

func (r *keyring) publicKeys() []op.Key {
	k := r.current()
	return []op.Key{publicKey{id: k.id, alg: k.alg, key: k.private.Public()}}
}

// sign serializes claims as a compact JWS with header typ "at+jwt"
// (RFC 9068) signed by the current key. A non-empty kid replaces the key's
// own id in the header.
func (r *keyring) sign(claims map[string]any, kid string) (string, error) {
	k := r.current()
	if kid == "" {
		kid = k.id
	}
	signer, err := jose.NewSigner(jose.SigningKey{
		Algorithm: k.alg,
		Key:       &jose.JSONWebKey{Key: k.private, KeyID: kid},
	}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// randomID returns n random bytes in hex.
func randomID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
