// Package oauth verifies JWT access tokens (RFC 9068) for mcpblob acting as
// an OAuth 2.1 resource server (SPEC §15, the MCP authorization spec). It
// does not serve protected resource metadata or write WWW-Authenticate
// headers; its caller does, using [Verifier.Metadata] and the reason of a
// [TokenError].
//
// # Setup
//
// [New] validates a [Config], discovers the authorization server (AS)
// metadata and fetches its JWKS, failing with an error that names what
// failed. For an issuer https://as.example/tenant1 it tries, in order,
//
//	https://as.example/.well-known/oauth-authorization-server/tenant1   (RFC 8414 path insertion)
//	https://as.example/.well-known/openid-configuration/tenant1         (OIDC path insertion)
//	https://as.example/tenant1/.well-known/openid-configuration         (OIDC appended)
//
// and for an issuer without a path /.well-known/oauth-authorization-server
// then /.well-known/openid-configuration. A document is used only if its
// "issuer" equals Config.Issuer exactly (RFC 8414 §3.3) and its "jwks_uri"
// is https. Every URL fetched (issuer, jwks_uri, redirect targets) must be
// https unless its host is a loopback address (127.0.0.0/8, ::1,
// localhost). Response bodies are read up to 1 MiB, a JWKS may hold at
// most 100 keys, and redirects are followed at most 5 times.
//
// # Keys
//
// A JWK is used when it is a public RSA (at least 2048 bits), EC
// (P-256/384/521) or Ed25519 key, its "use" is absent or "sig", its
// "key_ops" is absent or contains "verify", and its "alg", if set, is in the
// allow-list and fits the key; other keys are skipped. The JWKS is fetched
// again when older than Config.MaxAge (or a shorter Cache-Control max-age,
// never below Config.MinRefresh), so a key removed by rotation stops
// verifying; that fetch happens inside the Verify call that notices the
// age. A token whose kid is unknown triggers one fetch and a second lookup.
// Fetches are at most one per MinRefresh and concurrent callers share one
// fetch. When a fetch fails, the old keys stay in use for at most MaxAge
// past their expiry; after that Verify returns [ErrUnavailable]. With a
// fresh JWKS and a known kid, Verify does no network I/O and takes no lock.
//
// # Verification
//
// Tokens must be JWS compact serializations (three parts; JWE is refused)
// of at most 16 KiB. The algorithm allow-list holds the asymmetric JWS
// algorithms only — RS256/384/512, PS256/384/512, ES256/384/512, EdDSA —
// optionally narrowed by Config.Algorithms, and is passed to go-jose's
// ParseSignedCompact, so "none" and HS* never parse. The allow-list is not
// intersected with the AS metadata: RFC 8414 has no field for access-token
// algorithms (id_token_signing_alg_values_supported describes ID tokens,
// token_endpoint_auth_signing_alg_values_supported client assertions), and
// the JWK's own "alg" is the binding per-key restriction. The key is chosen
// by kid; a token without kid is accepted only when the JWKS has exactly
// one usable key. The header alg must equal the JWK's "alg" when it sets
// one and must fit the key type and curve, so an HS256 token MACed with the
// RSA public key's bytes can never verify. A "typ" header, when present,
// must be at+jwt, application/at+jwt or JWT (case-insensitive), which keeps
// ID tokens and other JWTs that label themselves out.
//
// Claims: "iss" equals Config.Issuer; "aud" (string or array) contains
// Config.Audience; "exp" is required and in the future; "nbf" and "iat",
// if present, are not in the future; Config.Leeway applies to all three,
// and all three are JSON numbers (RFC 7519 §2: a string of digits is a
// malformed claim).
// The claim named by Config.TenantClaim must be a non-empty string and
// becomes [Claims].Principal. Scopes come from "scope" (space-separated)
// and "scp" (array or string).
//
// A token that passed is remembered by its SHA-256 (at most 4 MiB of
// claims; random entries go beyond that), so a client sending the same
// bearer on every request pays the signature check once. A remembered
// token is accepted again only while it has not expired (exp plus the
// leeway) and the JWKS snapshot that verified it is still the current one:
// the refresh that retires a key sends every token through the full check
// again. Refused tokens are not remembered.
//
// # Errors
//
// Every refusal is a *[TokenError] wrapping [ErrInvalidToken], whose Reason
// is a short fixed phrase ("expired", "wrong audience", "unknown signing
// key", "algorithm not allowed", …) that never includes token contents.
// [ErrUnavailable] and context errors mean the server could not decide.
package oauth
