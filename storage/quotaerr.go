package storage

import (
	"errors"
	"fmt"
)

// ErrQuotaExceeded reports an upload refused because it would take its
// principal past a quota (package storage/quota): the caller's fault, not
// the store's; nothing is stored. The *QuotaError in the chain says which
// quota and by how much.
var ErrQuotaExceeded = errors.New("storage: quota exceeded")

// QuotaError is a refusal by a quota: What is "bytes" or "objects", Limit
// the quota, Usage what the principal holds (stored and in flight), Fits
// how much more of What would still be accepted.
type QuotaError struct {
	What  string
	Limit int64
	Usage int64
	Fits  int64
}

func (e *QuotaError) Error() string { return "storage: quota exceeded: " + e.Detail() }

// Detail is the refusal as a client reads it.
func (e *QuotaError) Detail() string {
	return fmt.Sprintf("the %s quota is %d, usage %d, %d more fit", e.What, e.Limit, e.Usage, e.Fits)
}

// QuotaErrorOf returns the *QuotaError in err's chain, or nil.
func QuotaErrorOf(err error) *QuotaError {
	var qe *QuotaError
	if errors.As(err, &qe) {
		return qe
	}
	return nil
}

// QuotaExceeded returns the refusal's figures, so that a package that
// may not import storage (the gateway's) finds a *QuotaError in an
// error's chain by this method (errors.As on an interface).
func (e *QuotaError) QuotaExceeded() (quota string, limit, usage, fits int64) {
	return e.What, e.Limit, e.Usage, e.Fits
}

// Unwrap returns ErrQuotaExceeded.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }
