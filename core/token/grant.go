package token

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Default lifetimes of minted URLs.
const (
	DefaultDownloadTTL = 15 * time.Minute
	// MaxSingleUseTTL bounds a single-use link's lifetime: its redemption
	// is recorded in the store until it expires.
	MaxSingleUseTTL  = 24 * time.Hour
	DefaultUploadTTL = 15 * time.Minute
)

// DownloadGrant describes a download link ("<base>/d/<token>") to mint.
type DownloadGrant struct {
	Principal string        // who may use it (recorded; the link itself is the credential)
	Key       string        // the blob key
	Filename  string        // Content-Disposition filename override, optional
	SingleUse bool          // the link serves one successful response
	Version   string        // the object's ETag: the link serves that version only ("" any)
	TTL       time.Duration // default DefaultDownloadTTL
}

// Upload describes an upload endpoint ("<base>/u/<token>") to mint.
type Upload struct {
	Principal string        // who the stored object is attributed to
	Key       string        // target key; "" lets the server pick UploadObjectKey under Prefix
	Prefix    string        // store prefix of the key the server picks (a namespace), with Key ""
	MaxSize   int64         // byte limit of the upload; required (> 0)
	Accept    []string      // accepted media types ("image/*"); empty accepts all
	TTL       time.Duration // default DefaultUploadTTL
	BlobTTL   time.Duration // the stored blob's expiry after its upload (whole seconds); 0 none
}

// MintedURL is the result of [Keyring.MintDownload] and [Keyring.MintUpload].
type MintedURL struct {
	URL      string    // absolute URL under the base
	Token    string    // the token in the URL's last segment
	Expires  time.Time // expiry, whole seconds
	UploadID string    // upload endpoints only: the token's nonce
	Method   string    // upload endpoints only: "POST" (multipart/form-data, field "file"); PUT with a raw body is also accepted
}

// MintDownload seals a PurposeDownload token for g and returns
// base + "/d/" + token. base is the server's public URL, without a trailing
// slash.
func (kr *Keyring) MintDownload(base string, g DownloadGrant) (MintedURL, error) {
	if g.Key == "" {
		return MintedURL{}, errors.New("token: mint download: empty key")
	}
	ttl := g.TTL
	if ttl <= 0 {
		ttl = DefaultDownloadTTL
	}
	if g.SingleUse && ttl > MaxSingleUseTTL {
		return MintedURL{}, fmt.Errorf("token: mint download: a single-use link lives at most %s", MaxSingleUseTTL)
	}
	c := Claims{Purpose: PurposeDownload, Principal: g.Principal, Object: g.Key,
		Filename: g.Filename, SingleUse: g.SingleUse, Version: g.Version, Expires: kr.now().Add(ttl).Truncate(time.Second)}
	tok, err := kr.Seal(c) // sealed: the URL must not reveal the key or the principal
	if err != nil {
		return MintedURL{}, err
	}
	return MintedURL{URL: strings.TrimSuffix(base, "/") + "/d/" + tok, Token: tok, Expires: c.Expires}, nil
}

// MintUpload seals a PurposeUpload token for u and returns
// base + "/u/" + token. The token's Nonce is a fresh upload id (32 lower-case
// hex digits), also returned as UploadID; Object is u.Key ("" means the
// server stores the upload under [UploadObjectKey]).
func (kr *Keyring) MintUpload(base string, u Upload) (MintedURL, error) {
	if u.MaxSize <= 0 {
		return MintedURL{}, errors.New("token: mint upload: maxSize must be positive")
	}
	ttl := u.TTL
	if ttl <= 0 {
		ttl = DefaultUploadTTL
	}
	id := NewUploadID()
	c := Claims{Purpose: PurposeUpload, Principal: u.Principal, Object: u.Key, Prefix: u.Prefix, MaxSize: u.MaxSize,
		Accept: u.Accept, Nonce: id, Expires: kr.now().Add(ttl).Truncate(time.Second), BlobTTL: int64(u.BlobTTL / time.Second)}
	tok, err := kr.Seal(c) // sealed: the URL must not reveal the key or the principal (SPEC §6.2)
	if err != nil {
		return MintedURL{}, err
	}
	return MintedURL{URL: strings.TrimSuffix(base, "/") + "/u/" + tok, Token: tok, Expires: c.Expires,
		UploadID: id, Method: "POST"}, nil
}

// NewUploadID returns 16 random bytes as lower-case hex.
func NewUploadID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("bug: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// UploadObjectKey is the key an upload token stores under: c.Object when
// set, else c.Prefix + "uploads/<uploadId>/<filename>" with the filename reduced to its
// last path element ("file" when nothing usable is left).
func UploadObjectKey(c Claims, filename string) string {
	if c.Object != "" {
		return c.Object
	}
	return c.Prefix + uploadName(c, filename)
}

// uploadName is the part of UploadObjectKey under the prefix.
func uploadName(c Claims, filename string) string {
	name := path.Base(strings.ReplaceAll(filename, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	for len(name) > 255 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" || name == "." || name == ".." || name == "/" {
		name = "file"
	}
	return "uploads/" + c.Nonce + "/" + name
}
