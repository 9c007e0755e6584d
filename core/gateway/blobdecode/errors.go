package blobdecode

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
)

// ErrTruncated means the upstream's body ended before the answer did: in
// the middle of the JSON, or of the SSE event that carries it.
var ErrTruncated = errors.New("blobdecode: the upstream's answer ended early")

// ErrNoContent means the answer's result has no content to stream:
// contents is absent or empty, or its first entry has neither a blob nor a
// text member.
var ErrNoContent = errors.New("blobdecode: the result has no blob or text content")

// RPCError is the upstream's JSON-RPC error answer, passed on as it came
// (its data member is not kept). Message is cut at Options.MaxStringBytes.
type RPCError struct {
	Code    int64
	Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("blobdecode: upstream error %d: %s", e.Code, e.Message)
}

// CorruptError means the blob is not base64: Offset counts the blob's
// characters (JSON escapes resolved, CR and LF left out) before the fault,
// as encoding/base64.CorruptInputError does, which it unwraps to. A blob
// that ends inside a quantum has Offset -1 and unwraps to nothing.
type CorruptError struct {
	Offset int64
}

func (e *CorruptError) Error() string {
	if e.Offset < 0 {
		return "blobdecode: the blob is not base64: it ends inside a 4-character group"
	}
	return "blobdecode: the blob is not base64: illegal data at character " + strconv.FormatInt(e.Offset, 10)
}

func (e *CorruptError) Unwrap() error {
	if e.Offset < 0 {
		return nil
	}
	return base64.CorruptInputError(e.Offset)
}

// IDError means the upstream answered a request other than ours: Got is
// the id it answered, as JSON ("null" when it had none).
type IDError struct {
	Got string
}

func (e *IDError) Error() string {
	return "blobdecode: the upstream answered request id " + e.Got + ", not ours"
}

// FormatError means the upstream's body is not what a resources/read
// answer is: another Content-Type, malformed SSE, data that is not JSON,
// JSON that is not a JSON-RPC response, or a result that is not a
// ReadResourceResult (a member of the wrong type or given twice).
type FormatError struct {
	Why string
}

func (e *FormatError) Error() string { return "blobdecode: malformed upstream answer: " + e.Why }

// LimitError means the upstream's body broke one of the Options bounds:
// What names it ("SSE line", "string", "bytes outside the content",
// "content size", "nesting depth").
type LimitError struct {
	What  string
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("blobdecode: the upstream's answer is over the bound on %s (%d)", e.What, e.Limit)
}

// ReadError is a failure to read the upstream's body (the connection
// broke, a deadline passed); it unwraps to the read error.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "blobdecode: reading the upstream: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// WriteError is a failure of the destination writer (the client went
// away): not the upstream's fault. It unwraps to the write error.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "blobdecode: writing the content: " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Upstream reports whether err is the upstream's fault (every error of
// this package but a *WriteError, and a Begin callback's own error): what
// a gateway answers with a bad-gateway error and logs as the upstream's.
func Upstream(err error) bool {
	var (
		w *WriteError
		b *beginError
	)
	return err != nil && !errors.As(err, &w) && !errors.As(err, &b)
}

// beginError carries the error a Begin callback returned, so Upstream
// does not blame the upstream for it; it unwraps to that error.
type beginError struct{ err error }

func (e *beginError) Error() string { return e.err.Error() }
func (e *beginError) Unwrap() error { return e.err }

// formatf returns a *FormatError.
func formatf(format string, args ...any) error {
	return &FormatError{Why: fmt.Sprintf(format, args...)}
}
