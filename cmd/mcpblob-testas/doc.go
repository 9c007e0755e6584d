// Command mcpblob-testas is the OAuth 2.1 authorization server mcpblob's
// tests run against. It is zitadel's OpenID Provider
// (github.com/zitadel/oidc/v3/pkg/op) with an in-memory storage, a login
// page, RFC 8414 metadata, RFC 8707 resource indicators, RFC 9068 JWT
// access tokens and test-only endpoints to rotate the signing key and mint
// tokens. It is a test tool: it listens on loopback only and keeps nothing.
//
// It is a module of its own, so none of its dependencies enter mcpblob's.
// Install it with
//
//	cd cmd/mcpblob-testas && GOBIN=$(TOOLBIN) go install .
//
// # Flags
//
//	-listen 127.0.0.1:0        loopback host:port (other hosts are refused)
//	-issuer URL|/path          issuer; a path such as /tenant1 is put under
//	                           http://<listen addr> (default http://<listen addr>)
//	-no-rfc8414                serve OIDC discovery only, not RFC 8414 metadata
//	-alg RS256|ES256           signing algorithm (default RS256)
//	-token-ttl 1h              access token lifetime
//	-resource URL              allowed RFC 8707 resource (repeatable); the first
//	                           is the audience when a request names none
//	-scope NAME                extra allowed scope (repeatable)
//	-user id:username:password (repeatable; default alice:alice:alice-pw and
//	                           bob:bob:bob-pw); the token's sub is the id
//	-user-claim id:name=value  extra string claim in the user's access tokens
//	-user-scopes id:s1,s2      the scopes the user may be granted (default all);
//	                           openid, profile, email and offline_access always
//	-client id[:secret]=redirect1,redirect2
//	                           client (repeatable; default
//	                           mcpblob-test=http://127.0.0.1/callback)
//
// When it listens it prints one line to stdout,
//
//	mcpblob-testas listening on <issuer>
//
// and it stops on SIGTERM or SIGINT.
//
// # Clients
//
// A client without a secret is public: it must send PKCE S256 and
// authenticates with "none". zitadel treats it as a native application, so
// a loopback redirect URI (http://127.0.0.1, http://[::1] or
// http://localhost) matches a registered loopback one with the same path
// and query on any port and host (RFC 8252 §7.3). A client with a secret is
// confidential: client_secret_basic or client_secret_post, PKCE optional
// (S256 only) and redirect URIs matched exactly.
//
// # Endpoints
//
// Discovery is at <issuer>/.well-known/openid-configuration and, the same
// document, at /.well-known/oauth-authorization-server<issuer path>
// (RFC 8414). zitadel's endpoints are under the issuer: authorize,
// oauth/token, keys (the JWKS), userinfo, oauth/introspect, revoke.
// Scopes offered: openid profile email offline_access blobs:read
// blobs:write blobs:admin and each -scope; the others asked for are
// dropped. Refresh tokens are issued when offline_access is granted, and
// rotate on use.
//
// Access tokens are JWTs with header typ "at+jwt" (RFC 9068), signed with
// the current key, with the claims iss, sub, aud, exp, iat, nbf, jti,
// client_id, scope (space-separated) and the user's -user-claim claims. aud
// is the resource parameters of the authorization request, each of which
// must be a -resource (or the request fails with invalid_target), or else
// the first -resource, or else the client id. A token request may repeat a
// granted resource to narrow aud; another one fails with invalid_target.
//
// # Logging in
//
// A browser, or a test with plain HTTP that does not follow redirects:
//
//  1. GET the authorization URL (<issuer>/authorize?response_type=code&
//     client_id=…&redirect_uri=…&scope=…&state=…&code_challenge=…&
//     code_challenge_method=S256[&resource=…]): 302 to <issuer>/login?id=<id>.
//  2. GET that login page: 200, an HTML form (no JavaScript) that posts to
//     <issuer>/login with the fields id (hidden), username and password.
//  3. POST the form, application/x-www-form-urlencoded, id=<id>&username=…&
//     password=…: 302 to <issuer>/authorize/callback?id=<id> (a wrong
//     password answers 401 with the form again).
//  4. GET that: 302 to <redirect_uri>?code=…&state=….
//
// The code is then exchanged at <issuer>/oauth/token as usual
// (grant_type=authorization_code, code, redirect_uri, client_id,
// code_verifier).
//
// # Test endpoints
//
// Not under the issuer but at the root, and without authentication:
//
//	POST /test/rotate  new signing key with a new kid; the old one leaves the
//	                   JWKS. Answers {"kid": "<new kid>"}.
//	GET  /test/keys    {"kids": ["<current kid>"]}
//	POST /test/mint    body {"sub", "scope", "aud" (string or array), "iss",
//	                   "expires_in" (seconds, may be negative), "not_before_in"
//	                   (seconds), "kid" (header override), "claims" (object,
//	                   added last, overriding)}; answers {"access_token": JWT}
//	                   signed like the token endpoint's. Absent fields take a
//	                   good token's values.
package main
