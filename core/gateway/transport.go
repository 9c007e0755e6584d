package gateway

import (
	"context"
	"io"
	"net/http"
)

// Request is one client request to the MCP endpoint, already admitted by
// the transport (Host, Origin, the caller's credential).
type Request struct {
	Method string      // HTTP method
	Header http.Header // the client's headers, as received
	// Body is the request body, read as the upstream takes it; nil for
	// none. The transport bounds it (rate rule, limits).
	Body io.Reader
	// ContentLength is the body's declared length; -1 unknown.
	ContentLength int64
	// Principal is the authenticated caller ("" on an open endpoint).
	Principal string
	// Context carries values (a request id) to what the gateway records
	// for the request; the upstream call ends with its answer, or with the
	// client gone, not with this context.
	Context context.Context
}

// ResponseWriter is the transport's response. Status and headers are set
// before the body; at most one of SetBody and SetBodyStream is called.
type ResponseWriter interface {
	SetStatus(code int)
	AddHeader(name, value string)
	// SetBody sends b as the whole body (the writer may keep b).
	SetBody(b []byte)
	// SetBodyStream sends the body write produces; size >= 0 is its exact
	// length. write may run after the serving call returned, and runs once
	// even when the response is dropped (then w fails).
	SetBodyStream(size int64, write func(w StreamWriter) error)
}

// StreamWriter is what a streamed body is written to; Flush pushes what
// is buffered to the client (before the first write: the status and
// headers).
type StreamWriter interface {
	io.Writer
	Flush() error
}

// HeadersWithFirstBytes is implemented by a ResponseWriter that sends the
// status and headers of an open event stream (SetBodyStream of size -1)
// before the body is written, as soon as the serving call returns: called
// before SetBodyStream, it has them go with the stream's first bytes
// instead (one write), which the gateway already holds.
type HeadersWithFirstBytes interface {
	HeadersWithFirstBytes()
}

// BodyCopier is implemented by a ResponseWriter whose SetBodyCopy sends b
// as the whole body, as SetBody does, but copies it before it returns (into
// buffers of its own): the gateway then hands it a pooled buffer that it
// uses again at once.
type BodyCopier interface {
	SetBodyCopy(b []byte)
}
