package offload

import (
	"errors"

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
}

// Classify names the failure of a rewrite: the upstream's (a blob that is
// not base64, a body that ends early or is not JSON-RPC), the gateway's
// own (Kind "": its store failed), or nil for a client that went away.
func Classify(err error) *Failure {
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
