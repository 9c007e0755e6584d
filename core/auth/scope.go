package auth

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The scopes mcpblob understands.
const (
	// ScopeRead lists, stats, reads and streams blobs and mints download links.
	ScopeRead = "blobs:read"
	// ScopeWrite uploads and deletes blobs and mints upload endpoints.
	ScopeWrite = "blobs:write"
	// ScopeAdmin reaches every namespace (and implies read and write).
	ScopeAdmin = "blobs:admin"
)

// AllScopes lists every scope, in the order protected resource metadata
// advertises them.
var AllScopes = []string{ScopeRead, ScopeWrite, ScopeAdmin}

// Identity is who a request is from and what its credential grants.
type Identity struct {
	// Principal names the caller: an API key's principal, or the OAuth
	// token's subject (or the tenant claim). It keys the caller's
	// namespace and binds sessions, links and upload endpoints.
	Principal string
	// Scopes are the granted scopes, sorted; unknown ones are kept.
	Scopes []string
	// Method says how the caller authenticated: "key", "oauth", or "" for
	// an open endpoint (no authentication configured).
	Method string
	// Expires, when not zero, is when the credential stops being
	// accepted: an OAuth token's exp plus the verifier's clock-skew
	// leeway. An API key has none (it lasts until the keys are reloaded
	// without it, see [Authenticator.StillValid]).
	Expires time.Time
	// Quota is the quota the credential names (a key line's quota=, an
	// OAuth token's quota claim); zero when it names none.
	Quota Quota
}

// Open is the identity of every request to an endpoint without
// authentication: no principal, every scope.
var Open = Identity{Scopes: AllScopes}

// Has reports whether id's scopes grant scope. blobs:admin grants every
// scope.
func (id Identity) Has(scope string) bool {
	return slices.Contains(id.Scopes, scope) || slices.Contains(id.Scopes, ScopeAdmin)
}

// Admin reports whether id reaches every namespace.
func (id Identity) Admin() bool { return slices.Contains(id.Scopes, ScopeAdmin) }

// NormalizeScopes returns scopes sorted and without duplicates or empty
// entries.
func NormalizeScopes(scopes []string) []string {
	out := slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseKeyScopes reads an API key's scope list: comma-separated short
// names (read, write, admin) or full names (blobs:read…).
func ParseKeyScopes(list string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		full := s
		if !strings.Contains(s, ":") {
			full = "blobs:" + s
		}
		if !slices.Contains(AllScopes, full) {
			return nil, fmt.Errorf("unknown scope %q (want read, write or admin)", s)
		}
		out = append(out, full)
	}
	return NormalizeScopes(out), nil
}

// ShortScopes is the inverse of ParseKeyScopes: "read,write".
func ShortScopes(scopes []string) string {
	short := make([]string, len(scopes))
	for i, s := range scopes {
		short[i] = strings.TrimPrefix(s, "blobs:")
	}
	return strings.Join(short, ",")
}
