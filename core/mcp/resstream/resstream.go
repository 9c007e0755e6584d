package resstream

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// SEP-2532 error codes.
const (
	CodeNotSupported = -32003
	CodeTooLarge     = -32004
)

// HeaderResourceURI names the canonical URI on direct and redirect answers.
const HeaderResourceURI = "MCP-Resource-Uri"

// Answer is a resources/stream answer: exactly one of Body (raw bytes,
// Size long, sent directly; Size < 0: of unknown length, sent chunked),
// Location (a 302 redirect) and DownloadURL (a JSON result naming a link)
// is set. [Check] holds it to what the client allows.
type Answer struct {
	URI, MIMEType string
	Size          int64
	Body          io.ReadCloser
	Location      string
	DownloadURL   string
	// Header holds extra response headers of a direct or redirect answer
	// (Content-Disposition, ETag…).
	Header [][2]string
}

// BodySender is an optional extension of mcp's ResponseWriter for raw
// bytes: SendBody sends exactly size bytes read from r as the body and
// closes r afterwards (also when the body is never sent). core/server
// implements it to use sendfile(2) when r unwraps to an *os.File. Without
// it the bytes are copied through SetBodyStream.
type BodySender interface {
	SendBody(r io.ReadCloser, size int64)
}

// Capability returns whether the client capabilities caps declare
// resourceStreaming, and its maxStreamSize (0 = no limit).
func Capability(caps json.RawMessage) (bool, int64) {
	var m struct {
		RS *struct {
			MaxStreamSize int64 `json:"maxStreamSize"`
		} `json:"resourceStreaming"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &m) != nil || m.RS == nil {
		return false, 0
	}
	return true, max(m.RS.MaxStreamSize, 0)
}

// AddCapability sets resources.stream in the server capabilities caps
// when the client capabilities client declared resourceStreaming.
func AddCapability(caps map[string]any, client json.RawMessage) {
	if ok, _ := Capability(client); !ok {
		return
	}
	if r, ok := caps["resources"].(map[string]any); ok {
		r["stream"] = true
	}
}

// NotSupported is the error for a resource that cannot be streamed to
// this client, why saying what is missing.
func NotSupported(uri, why string) *jsonrpc.Error {
	return jsonrpc.NewError(CodeNotSupported, "Resource streaming not supported: "+why,
		map[string]any{"uri": uri, "suggestion": "Use resources/read"})
}

// TooLarge is the error for a resource over the client's maxStreamSize.
func TooLarge(uri string, size, maxSize int64) *jsonrpc.Error {
	return jsonrpc.NewError(CodeTooLarge, "Resource too large for the client's maxStreamSize",
		map[string]any{"uri": uri, "size": size, "maxStreamSize": maxSize})
}

// WithDone returns body whose Close closes it, then runs done (ending the
// call's context).
func WithDone(body io.ReadCloser, done func()) io.ReadCloser {
	return &doneCloser{ReadCloser: body, done: done}
}

// doneCloser closes the reader, then runs done.
type doneCloser struct {
	io.ReadCloser
	done func()
}

// Unwrap returns the underlying reader, so a transport can find an *os.File.
func (c *doneCloser) Unwrap() io.ReadCloser { return c.ReadCloser }

func (c *doneCloser) Close() error {
	err := c.ReadCloser.Close()
	c.done()
	return err
}

// Headers are the status and headers of a direct or redirect answer a:
// MCP-Resource-Uri names its canonical URI (a handler's own header of that
// name, in a.Header, comes later and wins).
func Headers(a *Answer) (status int, header [][2]string) {
	if headerSafe(a.URI) {
		header = append(header, [2]string{HeaderResourceURI, a.URI})
	}
	status = http.StatusOK
	if a.Location != "" {
		status = http.StatusFound
		header = append(header, [2]string{"Location", a.Location})
	} else {
		header = append(header, [2]string{"Content-Type", a.MIMEType})
	}
	return status, append(header, a.Header...)
}

// headerSafe reports whether v may be sent as a header value as it is (no
// control character that could end the header).
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return false
		}
	}
	return v != ""
}
