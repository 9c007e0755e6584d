package token

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sealed tokens: the same claims, encrypted as well as authenticated, for
// URLs that must not reveal what they point at (SEP-2532: a downloadUrl
// "MUST NOT leak resource/user info in path/query"). Format:
//
//	"~" kid "." base64url(nonce[12] || AES-256-GCM(payload JSON, aad = kid))
//
// The AES key is HKDF-SHA256(secret, info "mcpblob token seal v1"), so one
// configured key serves both formats and rotates the same way. [Keyring.Verify]
// accepts both formats; [Keyring.Seal] mints sealed ones.

const (
	sealPrefix = "~"
	sealInfo   = "mcpblob token seal v1"
)

func sealAEAD(secret []byte) cipher.AEAD {
	k, err := hkdf.Key(sha256.New, secret, nil, sealInfo, 32)
	if err != nil {
		panic("bug: hkdf: " + err.Error())
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		panic("bug: aes: " + err.Error())
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("bug: gcm: " + err.Error())
	}
	return aead
}

// Seal returns an encrypted token for c with the newest key; see Sign for
// the claims rules.
func (kr *Keyring) Seal(c Claims) (string, error) {
	if c.Purpose == "" {
		return "", errors.New("token: seal: empty purpose")
	}
	k := kr.keys[len(kr.keys)-1]
	payload, err := json.Marshal(kr.wire(c, k.ID))
	if err != nil {
		return "", fmt.Errorf("token: seal: %w", err)
	}
	aead := sealAEAD(k.Secret)
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(payload)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("bug: crypto/rand failed: " + err.Error())
	}
	box := aead.Seal(nonce, nonce, payload, []byte(k.ID))
	return sealPrefix + k.ID + "." + b64.EncodeToString(box), nil
}

// openSealed decrypts a sealed token's payload.
func (kr *Keyring) openSealed(s string) (wireClaims, error) {
	kid, enc, ok := strings.Cut(strings.TrimPrefix(s, sealPrefix), ".")
	if !ok || kid == "" || enc == "" {
		return wireClaims{}, fmt.Errorf("%w: want ~kid.box", ErrMalformed)
	}
	box, err := b64.DecodeString(enc)
	if err != nil {
		return wireClaims{}, fmt.Errorf("%w: bad box encoding", ErrMalformed)
	}
	var key *Key
	for i := range kr.keys {
		if kr.keys[i].ID == kid {
			key = &kr.keys[i]
			break
		}
	}
	if key == nil {
		return wireClaims{}, ErrBadSignature
	}
	aead := sealAEAD(key.Secret)
	if len(box) < aead.NonceSize()+aead.Overhead() {
		return wireClaims{}, fmt.Errorf("%w: box too short", ErrMalformed)
	}
	payload, err := aead.Open(nil, box[:aead.NonceSize()], box[aead.NonceSize():], []byte(kid))
	if err != nil {
		return wireClaims{}, ErrBadSignature
	}
	var w wireClaims
	if err := json.Unmarshal(payload, &w); err != nil || w.KeyID != kid {
		return wireClaims{}, fmt.Errorf("%w: bad payload", ErrMalformed)
	}
	return w, nil
}
