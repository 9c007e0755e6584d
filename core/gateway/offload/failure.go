package offload

import (
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
)

// Kinds of a failed rewrite that is the upstream's fault: the gateway's
// names of upstream failures (the outcome label of its upstream metrics).
const (
	KindBroken    = "broken"
	KindMalformed = "malformed"
)

// Failure names a rewrite that failed.
type Failure struct {
	// Kind is the upstream's failure (KindBroken, KindMalformed), or ""
	// when the gateway's own store failed.
	Kind string
	// Msg says what went wrong, for the client and the log.
	Msg string
	// Quota is set (Kind "") when the store refused the blob because it
	// would take the principal past a quota: the client's limit, not a
	// fault.
	Quota *Quota
}

// Quota is a store's refusal by a quota: Name is the quota ("bytes",
// "objects", ...), Limit the quota, Usage what the principal holds, Fits
// how much more would still be accepted.
type Quota struct {
	Name               string
	Limit, Usage, Fits int64
}

// quotaRefusal is implemented by a store's quota error (storage's
// QuotaError, which this package may not import).
type quotaRefusal interface {
	error
	QuotaExceeded() (quota string, limit, usage, fits int64)
}

// QuotaOf returns the quota refusal in err's chain (an error with a
// QuotaExceeded method, as storage's QuotaError), or nil.
func QuotaOf(err error) *Quota {
	var qr quotaRefusal
	if !errors.As(err, &qr) {
		return nil
	}
	q := &Quota{}
	q.Name, q.Limit, q.Usage, q.Fits = qr.QuotaExceeded()
	return q
}

// Detail is the refusal as a client reads it.
func (q *Quota) Detail() string {
	return fmt.Sprintf("the %s quota is %d, usage %d, %d more fit", q.Name, q.Limit, q.Usage, q.Fits)
}

// Classify names the failure of a rewrite: the upstream's (a blob that is
// not base64, a body that ends early or is not JSON-RPC), the gateway's
// own (Kind "": its store failed, or refused by a quota: Quota set), or
// nil for a client that went away.
func Classify(err error) *Failure {
	if q := QuotaOf(err); q != nil {
		return &Failure{Msg: "quota exceeded: " + q.Detail(), Quota: q}
	}
	var sink *blobdecode.SinkError
	var wr *blobdecode.WriteError
	switch {
	case errors.As(err, &sink):
		return &Failure{Msg: sink.Error()}
	case errors.As(err, &wr):
		return nil
	case errors.Is(err, blobdecode.ErrTruncated):
		return &Failure{Kind: KindBroken, Msg: "its answer ended early"}
	}
	var corrupt *blobdecode.CorruptError
	if errors.As(err, &corrupt) {
		return &Failure{Kind: KindMalformed, Msg: "an embedded blob of its answer is not base64"}
	}
	return &Failure{Kind: KindMalformed, Msg: "its answer could not be read: " + err.Error()}
}
