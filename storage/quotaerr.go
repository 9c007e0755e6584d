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

func (e *QuotaError) Error() string {
	return fmt.Sprintf("storage: quota exceeded: the %s quota is %d, usage %d, %d more fit", e.What, e.Limit, e.Usage, e.Fits)
}

// Unwrap returns ErrQuotaExceeded.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }
