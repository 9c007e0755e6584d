package mcp

import (
	"context"
	"io"
	"time"
)

// Request is the HTTP request the transport hands to [Server.ServeMCP]. The
// transport has already checked Host, Origin and authentication.
type Request struct {
	Method    string // HTTP method: POST, GET, DELETE…
	Header    Header // case-insensitive lookup
	Body      io.Reader
	Principal string // authenticated caller, "" when the endpoint runs open
	// Scopes are what the caller's credential grants (OAuth scopes or an
	// API key's); nil when the endpoint runs open. Options.Authorize and
	// handlers (Call.Scopes) read them.
	Scopes []string
	// Audience selects the Hub events this request's notification streams
	// see: those published for it and those for everyone ([Event]).
	Audience string
	// Context, when set, carries values (the request id) to the storage
	// calls the request makes; calls still end with the server, not with
	// it.
	Context context.Context
	// Note, when set, receives the request's JSON-RPC method, tool, era
	// and outcome (for metrics and access logs).
	Note *Note
	// CredentialExpires, when not zero, is when the credential the request
	// was authenticated with stops being accepted (an OAuth access token's
	// exp plus the verifier's leeway). A notification stream the request
	// opens (the GET stream, subscriptions/listen) ends then.
	CredentialExpires time.Time
	// CredentialValid, when set, reports whether that credential is still
	// accepted (an API key not revoked since). Notification streams ask it
	// before each event and at each keep-alive interval, and end once it
	// says no. It must be cheap and safe for concurrent use.
	CredentialValid func() bool
}

// Header looks up a request header case-insensitively; "" means absent.
type Header interface {
	Get(name string) string
}

// HeaderMap is a Header over a map keyed by canonical or lower-case names,
// handy in tests.
type HeaderMap map[string]string

// Get implements Header.
func (h HeaderMap) Get(name string) string {
	for k, v := range h {
		if equalFold(k, name) {
			return v
		}
	}
	return ""
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}

// ResponseWriter is the HTTP response sink. Status and headers must be set
// before the body; exactly one of SetBody or SetBodyStream is called per
// response (none for an empty body).
type ResponseWriter interface {
	SetStatus(code int)
	SetHeader(name, value string)
	// SetBody sends b as the complete body. The writer may keep b until
	// the response is sent (no copy): the caller must not change b after.
	SetBody(b []byte)
	// SetBodyStream sends a body produced by write. size >= 0 is the exact
	// length (sent as Content-Length); size < 0 means unknown (chunked).
	// write may run after ServeMCP returns, on another goroutine; it must
	// return once w reports an error (the client went away). Flush pushes
	// buffered bytes to the client (SSE events).
	SetBodyStream(size int64, write func(w StreamWriter) error)
}

// PartsWriter is a ResponseWriter that copies a body given in three parts
// into a buffer it reuses (the front end's pooled one), unlike SetBody.
type PartsWriter interface {
	SetBodyParts(head, middle, tail []byte)
}

// StreamWriter is what a streamed body is written to.
type StreamWriter interface {
	io.Writer
	Flush() error
}
