package mcp

import (
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// A notification stream (the 2025-11-25 GET stream, 2026-07-28
// subscriptions/listen) ends with the credential that opened it: when the
// transport's Request.CredentialExpires passes, or Request.CredentialValid
// says the credential was revoked. subscriptions/listen then ends with a
// -32000 error (data.reason "credential_expired" or "credential_revoked");
// the GET stream, which must not carry responses, just ends. Either way the
// client reconnects with a fresh credential.

// credential is what a stream knows of the credential of its request.
type credential struct {
	expires time.Time   // zero: no expiry
	valid   func() bool // nil: never revoked
}

func credentialOf(r *Request) credential {
	return credential{expires: r.CredentialExpires, valid: r.CredentialValid}
}

// credentialWatch tells a stream when to look at its credential again: at
// its expiry and, when it can be revoked, every keep-alive interval.
type credentialWatch struct {
	cred  credential
	every time.Duration
	timer *time.Timer // nil when nothing can end the credential
}

func (s *Server) watchCredential(cred credential) *credentialWatch {
	w := &credentialWatch{cred: cred, every: s.opts.KeepAlive}
	if cred.valid != nil || !cred.expires.IsZero() {
		w.timer = time.NewTimer(w.untilNextCheck())
	}
	return w
}

func (w *credentialWatch) untilNextCheck() time.Duration {
	if w.cred.expires.IsZero() {
		return w.every
	}
	d := time.Until(w.cred.expires)
	if w.cred.valid != nil {
		d = min(d, w.every)
	}
	return max(d, 0)
}

// C fires when the credential is due to be checked (nil: never); the
// stream then calls fired.
func (w *credentialWatch) C() <-chan time.Time {
	if w.timer == nil {
		return nil
	}
	return w.timer.C
}

// fired checks the credential after C fired and arms the next check; nil
// while it is accepted.
func (w *credentialWatch) fired() *Error {
	if e := w.ended(); e != nil {
		return e
	}
	w.timer.Reset(w.untilNextCheck())
	return nil
}

// ended is nil while the credential is accepted, else the error that ends
// the stream.
func (w *credentialWatch) ended() *Error {
	switch {
	case !w.cred.expires.IsZero() && !time.Now().Before(w.cred.expires):
		return credentialEnded("credential_expired", "expired")
	case w.cred.valid != nil && !w.cred.valid():
		return credentialEnded("credential_revoked", "was revoked")
	}
	return nil
}

func (w *credentialWatch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func credentialEnded(reason, what string) *Error {
	return jsonrpc.NewError(CodeTransport, "Unauthorized: the credential this stream was opened with "+what+
		"; reopen it with a valid one", Object{"reason": reason}).WithStatus(http.StatusUnauthorized)
}
