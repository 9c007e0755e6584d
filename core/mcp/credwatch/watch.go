package credwatch

import (
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// Reasons in the data of the error that ends a stream.
const (
	ReasonExpired = "credential_expired"
	ReasonRevoked = "credential_revoked"
)

// Watch watches one stream's credential. It is used by the stream's own
// goroutine only.
type Watch struct {
	expires time.Time   // zero: no expiry
	valid   func() bool // nil: never revoked
	every   time.Duration
	timer   *time.Timer // nil when nothing can end the credential
}

// New watches a credential that expires at expires (zero: never) and is
// still accepted while valid says so (nil: always), checking valid every
// interval when no event prompts it. Stop it when the stream ends.
func New(expires time.Time, valid func() bool, every time.Duration) *Watch {
	w := &Watch{expires: expires, valid: valid, every: every}
	if valid != nil || !expires.IsZero() {
		w.timer = time.NewTimer(w.untilNextCheck())
	}
	return w
}

func (w *Watch) untilNextCheck() time.Duration {
	if w.expires.IsZero() {
		return w.every
	}
	d := time.Until(w.expires)
	if w.valid != nil {
		d = min(d, w.every)
	}
	return max(d, 0)
}

// C fires when the credential is due to be checked (nil: never); the
// stream then calls Fired.
func (w *Watch) C() <-chan time.Time {
	if w.timer == nil {
		return nil
	}
	return w.timer.C
}

// Fired checks the credential after C fired and arms the next check; nil
// while it is accepted.
func (w *Watch) Fired() *jsonrpc.Error {
	if e := w.Ended(); e != nil {
		return e
	}
	w.timer.Reset(w.untilNextCheck())
	return nil
}

// Ended is nil while the credential is accepted, else the error that ends
// the stream: -32000 (the code of the transport's 401 bodies) with data
// {"reason": ReasonExpired or ReasonRevoked}.
func (w *Watch) Ended() *jsonrpc.Error {
	switch {
	case !w.expires.IsZero() && !time.Now().Before(w.expires):
		return ended(ReasonExpired, "expired")
	case w.valid != nil && !w.valid():
		return ended(ReasonRevoked, "was revoked")
	}
	return nil
}

// Stop releases the timer.
func (w *Watch) Stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func ended(reason, what string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeTransport, "Unauthorized: the credential this stream was opened with "+what+
		"; reopen it with a valid one", map[string]any{"reason": reason}).WithStatus(http.StatusUnauthorized)
}
