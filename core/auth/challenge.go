package auth

import (
	"strings"
)

// Challenge is an RFC 6750 §3 WWW-Authenticate challenge of a protected
// resource (docs/auth.md): a 401 names the resource metadata and the
// scopes a token needs; a 403 adds error="insufficient_scope".
type Challenge struct {
	ResourceMetadata string // URL of the protected resource metadata
	Scope            string // space-separated scopes needed
	Error            string // "", "invalid_token" or "insufficient_scope"
	Description      string // error_description, a short phrase
}

// Error codes of RFC 6750 §3.1.
const (
	ErrorInvalidToken      = "invalid_token"
	ErrorInsufficientScope = "insufficient_scope"
	ErrorInvalidRequest    = "invalid_request"
)

// String is the header value: Bearer k="v", …
func (c Challenge) String() string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(k, v string) {
		if v == "" {
			return
		}
		b.WriteString(sep)
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(quote(v))
		b.WriteByte('"')
		sep = ", "
	}
	param("error", c.Error)
	param("error_description", c.Description)
	param("scope", c.Scope)
	param("resource_metadata", c.ResourceMetadata)
	return b.String()
}

// quote escapes a quoted-string's content and drops what a header cannot
// carry (control characters).
func quote(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}
