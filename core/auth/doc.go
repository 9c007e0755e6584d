// Package auth says who is asking and what they may do: the [Identity] a
// request's bearer credential resolves to (an API key from a keys file, or
// an OAuth 2.1 access token verified by package oauth), the scopes
// (blobs:read, blobs:write, blobs:admin) and what each operation needs, and
// the HTTP answers of a protected resource (docs/auth.md): the RFC 9728
// protected resource metadata and the RFC 6750 WWW-Authenticate
// challenges of a 401 or 403.
//
// It knows no HTTP framework and no storage: core/server asks it, per
// request, for the Identity and the challenge, and binds every surface to
// Identity.Principal.
package auth
