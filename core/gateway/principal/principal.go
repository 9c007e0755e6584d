package principal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header is the request header that carries the principal to the upstream.
const Header = "Mcp-Gateway-Principal"

// version opens every signed value.
const version = "v1"

// MinKeyLen is the shortest accepted signing key in bytes.
const MinKeyLen = 32

// Errors of [Verify]; test with errors.Is.
var (
	ErrMalformed = errors.New("principal: malformed header value")
	ErrSignature = errors.New("principal: bad signature")
	ErrExpired   = errors.New("principal: header value expired")
)

var b64 = base64.RawURLEncoding

// Sign returns the header value naming principal until exp, signed with
// key.
func Sign(key []byte, principal string, exp time.Time) string {
	body := version + "." + b64.EncodeToString([]byte(principal)) + "." + strconv.FormatInt(exp.Unix(), 10)
	return body + "." + b64.EncodeToString(mac(key, body))
}

// Plain returns the header value of principal for a trusted network: the
// principal as it is when it is printable ASCII without spaces at either
// end, else "b64:" and its base64url.
func Plain(principal string) string {
	for i := 0; i < len(principal); i++ {
		if principal[i] < 0x20 || principal[i] > 0x7e {
			return "b64:" + b64.EncodeToString([]byte(principal))
		}
	}
	if strings.TrimSpace(principal) != principal || strings.HasPrefix(principal, "b64:") {
		return "b64:" + b64.EncodeToString([]byte(principal))
	}
	return principal
}

// Verify checks a signed header value against key at now and returns the
// principal it names.
func Verify(key []byte, value string, now time.Time) (string, error) {
	body, sig, ok := cutLast(value)
	parts := strings.Split(body, ".")
	if !ok || len(parts) != 3 || parts[0] != version {
		return "", ErrMalformed
	}
	got, err := b64.DecodeString(sig)
	if err != nil {
		return "", ErrMalformed
	}
	if !hmac.Equal(got, mac(key, body)) {
		return "", ErrSignature
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return "", ErrMalformed
	}
	if now.Unix() >= exp {
		return "", ErrExpired
	}
	p, err := b64.DecodeString(parts[1])
	if err != nil {
		return "", ErrMalformed
	}
	return string(p), nil
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)
}
