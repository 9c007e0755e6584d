// Package gate holds the per-request rules every HTTP route of the front
// (package front) and of the blob service (package blobsvc) applies before
// and around its work, so neither needs the other: DNS-rebinding
// protection (Host and Origin, checked before any body is parsed), the
// caller's identity and scopes (bearer API keys or OAuth access tokens,
// package core/auth) with RFC 6750 challenges, the limits against slow
// and many clients (upload slots in all and per principal, a minimum rate
// for request bodies, package pace), the draining of refused bodies, and
// the error bodies of refusals: JSON-RPC for /mcp, {"error":{"code",
// "message"}} everywhere else (claimrate.go: the claims rate's 429;
// expiry.go: a blob's ttlSeconds read from a request, or its 400).
//
// A check decides and writes nothing: it returns a Refusal, which the
// route answers at one point (Refuse; AdmitMCP for /mcp) once the
// refusal's body rule has read a small body or marked the connection to
// close. So an /mcp request passes each check once, its body is taken
// once, and its path through the package is a straight line: admit.go
// (the checks, with hostorigin.go and identity.go), body.go (the upload
// slot and the body), refuse.go (the answer, and after core/mcp's answer
// what is left of the body). gate.go holds the types they share: Gate,
// Limits, Caller, Admission.
package gate
