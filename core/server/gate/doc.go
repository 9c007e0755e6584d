// Package gate holds the per-request rules every HTTP route of the front
// (package front) and of the blob service (package blobsvc) applies before
// and around its work, so neither needs the other: DNS-rebinding
// protection (Host and Origin, checked before any body is parsed), the
// caller's identity and scopes (bearer API keys or OAuth access tokens,
// package core/auth) with RFC 6750 challenges, the limits against slow
// and many clients (upload slots in all and per principal, a minimum rate
// for request bodies, package pace), the draining of refused bodies, and
// the error bodies of refusals: JSON-RPC for /mcp, {"error":{"code",
// "message"}} everywhere else.
package gate
