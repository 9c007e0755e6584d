package mcp

import (
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/credwatch"
)

// A notification stream (the 2025-11-25 GET stream, 2026-07-28
// subscriptions/listen) ends with the credential that opened it: when the
// transport's Request.CredentialExpires passes, or Request.CredentialValid
// says the credential was revoked (package credwatch). subscriptions/listen
// then ends with a -32000 error (data.reason "credential_expired" or
// "credential_revoked"); the GET stream, which must not carry responses,
// just ends. Either way the client reconnects with a fresh credential.

// credential is what a stream knows of the credential of its request.
type credential struct {
	expires time.Time   // zero: no expiry
	valid   func() bool // nil: never revoked
}

func credentialOf(r *Request) credential {
	return credential{expires: r.CredentialExpires, valid: r.CredentialValid}
}

// watchCredential watches cred for a stream, checking a revocable one
// every keep-alive interval.
func (s *Server) watchCredential(cred credential) *credwatch.Watch {
	return credwatch.New(cred.expires, cred.valid, s.opts.KeepAlive)
}
