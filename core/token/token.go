// Package token mints and verifies HMAC-SHA256 signed, expiring,
// purpose-bound tokens.
//
// A token is base64url(payload) "." base64url(mac), both without padding, so
// it is visible ASCII and safe in headers, URL paths and JSON strings. The
// payload is a small JSON object ([Claims]) that names the key id it was
// signed with; the MAC is HMAC-SHA256 over the encoded payload. A [Keyring]
// signs with its newest key and verifies with every key it holds, so keys can
// rotate without invalidating tokens in flight.
//
// Signed tokens are integrity-protected, not encrypted: never put secrets in
// Claims. [Keyring.Seal] mints sealed tokens (AES-256-GCM, seal.go) whose
// claims are also unreadable; download links use them so a URL reveals
// nothing about the blob. Verify accepts both.
// Callers bind a token to its use with Purpose (checked by Verify), to a
// caller with Principal, to an object with Object, and to time with Expires.
package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors returned (wrapped) by [Keyring.Verify]; test with errors.Is.
var (
	ErrMalformed    = errors.New("token: malformed")
	ErrBadSignature = errors.New("token: bad signature")
	ErrWrongPurpose = errors.New("token: wrong purpose")
	ErrExpired      = errors.New("token: expired")
)

// Well-known purposes. Purposes are free-form strings; these are the ones
// mcpblob itself uses.
const (
	// PurposeSession is a 2025-11-25 MCP session id whose session has a
	// live record in the shared store. Ids of the former purpose
	// "mcp-session", minted before those records, verify nowhere: their
	// clients get 404 and initialize again, and a node of that release
	// refuses the new ids likewise, so no node accepts an id whose end it
	// cannot see.
	PurposeSession      = "mcp-live-session"
	PurposeRequestState = "mcp-request-state"
	PurposeDownload     = "download"
	PurposeUpload       = "upload"
)

// MinKeyLen is the shortest accepted HMAC key in bytes.
const MinKeyLen = 32

// maxTokenLen bounds the input Verify is willing to decode.
const maxTokenLen = 64 << 10

// Claims is the signed payload of a token.
type Claims struct {
	KeyID     string    `json:"kid"`            // set by Sign
	Purpose   string    `json:"pur"`            // what the token may be used for; required
	Principal string    `json:"sub,omitempty"`  // who it was minted for
	Object    string    `json:"obj,omitempty"`  // what it refers to (a blob key, a method…)
	Expires   time.Time `json:"-"`              // zero means no expiry
	Nonce     string    `json:"n,omitempty"`    // random; Sign fills it when empty
	MaxSize   int64     `json:"max,omitempty"`  // upload limit in bytes
	Accept    []string  `json:"acc,omitempty"`  // accepted media types
	Data      []byte    `json:"d,omitempty"`    // opaque application data (e.g. MRTR state)
	Filename  string    `json:"fn,omitempty"`   // download links: Content-Disposition filename override
	SingleUse bool      `json:"one,omitempty"`  // download links: serve once (the server records the redemption as a storage claim)
	Version   string    `json:"ver,omitempty"`  // download links: the object version (ETag) the link is for
	Prefix    string    `json:"pfx,omitempty"`  // upload endpoints without Object: the store prefix of the key the server picks
	BlobTTL   int64     `json:"bttl,omitempty"` // upload endpoints: the stored blob's ttlSeconds, counted from its upload; 0 none
}

type wireClaims struct {
	Claims
	Exp int64 `json:"exp,omitempty"`
}

// Key is one HMAC key with its id.
type Key struct {
	ID     string
	Secret []byte
}

// NewKey returns a key with a random 32-byte secret.
func NewKey(id string) Key {
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		panic("bug: crypto/rand failed: " + err.Error())
	}
	return Key{ID: id, Secret: s}
}

// Keyring holds the keys a node signs and verifies with. It is safe for
// concurrent use; it is immutable after NewKeyring.
type Keyring struct {
	keys []Key // keys[len-1] is the newest
	now  func() time.Time
}

// NewKeyring returns a keyring; the last key is the newest and signs. Key ids
// must be unique, non-empty and made of [A-Za-z0-9_-] (they appear in sealed
// tokens), and secrets at least MinKeyLen bytes.
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("token: keyring needs at least one key")
	}
	seen := map[string]bool{}
	kr := &Keyring{now: time.Now}
	for _, k := range keys {
		switch {
		case k.ID == "":
			return nil, errors.New("token: empty key id")
		case !tokenAlphabet(k.ID) || strings.ContainsAny(k.ID, ".~"):
			return nil, fmt.Errorf("token: key id %q: use only letters, digits, '-' and '_'", k.ID)
		case seen[k.ID]:
			return nil, fmt.Errorf("token: duplicate key id %q", k.ID)
		case len(k.Secret) < MinKeyLen:
			return nil, fmt.Errorf("token: key %q shorter than %d bytes", k.ID, MinKeyLen)
		}
		seen[k.ID] = true
		kr.keys = append(kr.keys, Key{ID: k.ID, Secret: bytes.Clone(k.Secret)})
	}
	return kr, nil
}

// NewRandomKeyring returns a keyring with one fresh random key. Tokens it
// signs verify only in this process: fine for tests and single nodes.
func NewRandomKeyring() *Keyring {
	kr, err := NewKeyring(NewKey("k" + randomString(4)))
	if err != nil {
		panic("bug: " + err.Error())
	}
	return kr
}

// WithClock returns a copy of kr that reads the time from now (for tests).
func (kr *Keyring) WithClock(now func() time.Time) *Keyring {
	c := *kr
	c.now = now
	return &c
}

// b64 is strict: a token has exactly one spelling (non-zero trailing bits
// are refused), so bookkeeping keyed by token strings cannot be sidestepped.
var b64 = base64.RawURLEncoding.Strict()

// Sign returns the token for c, signed with the newest key. Purpose is
// required; Nonce is filled with 16 random bytes when empty.
func (kr *Keyring) Sign(c Claims) (string, error) {
	if c.Purpose == "" {
		return "", errors.New("token: sign: empty purpose")
	}
	k := kr.keys[len(kr.keys)-1]
	payload, err := json.Marshal(kr.wire(c, k.ID))
	if err != nil {
		return "", fmt.Errorf("token: sign: %w", err)
	}
	n := b64.EncodedLen(len(payload))
	out := make([]byte, n, n+1+b64.EncodedLen(sha256.Size))
	b64.Encode(out, payload)
	mac := sum(k.Secret, out)
	out = append(out, '.')
	out = b64.AppendEncode(out, mac)
	return string(out), nil
}

// Verify checks s and returns its claims. Errors wrap ErrMalformed,
// ErrBadSignature, ErrWrongPurpose or ErrExpired, checked in that order, so
// claims are never returned (nor trusted) before the signature is.
func (kr *Keyring) Verify(s, purpose string) (Claims, error) {
	if len(s) > maxTokenLen {
		return Claims{}, fmt.Errorf("%w: too long", ErrMalformed)
	}
	if !tokenAlphabet(s) {
		return Claims{}, fmt.Errorf("%w: a character outside base64url, '.' and '~'", ErrMalformed)
	}
	var w wireClaims
	if strings.HasPrefix(s, sealPrefix) {
		var err error
		if w, err = kr.openSealed(s); err != nil {
			return Claims{}, err
		}
	} else if err := kr.verifySigned(s, &w); err != nil {
		return Claims{}, err
	}
	c := w.Claims
	if w.Exp != 0 {
		c.Expires = time.Unix(w.Exp, 0)
	}
	if c.Purpose != purpose {
		return Claims{}, fmt.Errorf("%w: %q", ErrWrongPurpose, c.Purpose)
	}
	if !c.Expires.IsZero() && !kr.now().Before(c.Expires) {
		return Claims{}, ErrExpired
	}
	return c, nil
}

// verifySigned checks a signed token's MAC and decodes its payload into w.
func (kr *Keyring) verifySigned(s string, w *wireClaims) error {
	enc, macEnc, ok := strings.Cut(s, ".")
	if !ok || enc == "" || macEnc == "" {
		return fmt.Errorf("%w: want payload.mac", ErrMalformed)
	}
	mac, err := b64.DecodeString(macEnc)
	if err != nil || len(mac) != sha256.Size {
		return fmt.Errorf("%w: bad mac encoding", ErrMalformed)
	}
	payload, err := b64.DecodeString(enc)
	if err != nil {
		return fmt.Errorf("%w: bad payload encoding", ErrMalformed)
	}
	if err := json.Unmarshal(payload, w); err != nil {
		return fmt.Errorf("%w: bad payload", ErrMalformed)
	}
	var key *Key
	for i := range kr.keys {
		if kr.keys[i].ID == w.KeyID {
			key = &kr.keys[i]
			break
		}
	}
	if key == nil || !hmac.Equal(mac, sum(key.Secret, []byte(enc))) {
		return ErrBadSignature
	}
	return nil
}

// wire fills the key id, a nonce when empty, and the expiry in seconds.
func (kr *Keyring) wire(c Claims, kid string) wireClaims {
	c.KeyID = kid
	if c.Nonce == "" {
		c.Nonce = randomString(16)
	}
	w := wireClaims{Claims: c}
	if !c.Expires.IsZero() {
		w.Exp = c.Expires.Unix()
		if w.Exp <= 0 {
			w.Exp = 1
		}
	}
	return w
}

// tokenAlphabet reports whether s uses only the characters tokens are made
// of. encoding/base64 skips CR and LF, so without this check a token with
// line breaks inserted would verify as a second spelling of itself.
func tokenAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

func sum(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("bug: crypto/rand failed: " + err.Error())
	}
	return b64.EncodeToString(b)
}
