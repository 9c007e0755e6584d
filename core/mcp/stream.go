package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// resources/stream (SEP-2532, a proposal; SPEC.md §8). The server offers the
// resources.stream capability only to clients that declared
// resourceStreaming (2025-11-25: in initialize; 2026-07-28: in the request's
// clientCapabilities). A [ResourceHandler].Stream answers with the raw bytes
// (sent directly, with sendfile when the transport can), a redirect, or a
// downloadUrl.
//
// Errors are JSON-RPC errors in the era's codes: resource not found is -32002
// in 2025-11-25 and -32602 (data.uri) in 2026-07-28; "stream not supported"
// is -32003 and "too large" (over the client's maxStreamSize) -32004 in both,
// which 2026-07-28 allows as implementation-defined codes (-32000…-32019). A
// 2026-07-28 client without the capability gets -32021 (HTTP 400); a
// 2025-11-25 one gets -32003. docs/byte-plane.md has the full table.

// SEP-2532 error codes.
const (
	CodeStreamNotSupported = -32003
	CodeStreamTooLarge     = -32004
)

// HeaderResourceURI names the canonical URI on direct and redirect answers.
const HeaderResourceURI = "MCP-Resource-Uri"

// ErrNoResource is a ResourceHandler's answer for a URI it does not serve.
var ErrNoResource = errors.New("mcp: no such resource")

// BodySender is an optional [ResponseWriter] extension for raw bytes:
// SendBody sends exactly size bytes read from r as the body and closes r
// afterwards (also when the body is never sent). core/server implements it
// to use sendfile(2) when r unwraps to an *os.File. Without it the bytes are
// copied through SetBodyStream.
type BodySender interface {
	SendBody(r io.ReadCloser, size int64)
}

// streamingCap returns whether the client declared resourceStreaming and its
// maxStreamSize (0 = no limit).
func streamingCap(caps json.RawMessage) (bool, int64) {
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

// addStreamCapability sets resources.stream in caps when the client
// declared resourceStreaming.
func addStreamCapability(caps Object, client json.RawMessage) {
	if ok, _ := streamingCap(client); !ok {
		return
	}
	if r, ok := caps["resources"].(Object); ok {
		r["stream"] = true
	}
}

func streamNotSupported(uri, why string) *Error {
	return jsonrpc.NewError(CodeStreamNotSupported, "Resource streaming not supported: "+why,
		Object{"uri": uri, "suggestion": "Use resources/read"})
}

// StreamTooLarge is the error for a resource over the client's
// maxStreamSize.
func StreamTooLarge(uri string, size, maxSize int64) *Error {
	return jsonrpc.NewError(CodeStreamTooLarge, "Resource too large for the client's maxStreamSize",
		Object{"uri": uri, "size": size, "maxStreamSize": maxSize})
}

func (s *Server) resourcesStream(c *Call) (any, error) {
	uri, e := c.uriParam()
	if e != nil {
		return nil, e
	}
	if c.modern && c.header != nil && c.header.Get(headers.Name) != "" {
		// The released spec requires Mcp-Name only on tools/call,
		// resources/read and prompts/get; a client that sends it for
		// resources/stream (same params as resources/read) gets it checked.
		if e := headers.CheckName(c.header, uri, true); e != nil {
			return nil, e
		}
	}
	ok, maxSize := streamingCap(c.caps)
	if !ok {
		if c.modern {
			return nil, missingCapability("resourceStreaming")
		}
		return nil, streamNotSupported(uri, "the client did not declare the resourceStreaming capability")
	}
	for _, t := range s.templates {
		if t.Stream == nil {
			continue
		}
		ans, err := t.Stream(c, uri, maxSize)
		if !errors.Is(err, ErrNoResource) {
			return ans, err
		}
	}
	if ct, err := s.readAny(c, uri); err == nil {
		if ct.Body != nil {
			ct.Body.Close()
		}
		return nil, streamNotSupported(uri, "the resource does not stream")
	}
	return nil, c.NotFound(uri)
}

// writeStreamAnswer sends a direct or redirect answer; done runs once the
// body is out (or never will be).
func writeStreamAnswer(w ResponseWriter, a *StreamAnswer, done func()) {
	status := http.StatusOK
	if a.Location != "" {
		status = http.StatusFound
		w.SetHeader("Location", a.Location)
	} else {
		w.SetHeader("Content-Type", a.MIMEType)
	}
	w.SetStatus(status)
	for _, h := range a.Header {
		w.SetHeader(h[0], h[1])
	}
	if a.Body == nil {
		done()
		return
	}
	body := &cancelCloser{ReadCloser: a.Body, cancel: done}
	if bs, ok := transportWriter(w).(BodySender); ok {
		bs.SendBody(body, a.Size)
		return
	}
	w.SetBodyStream(a.Size, func(sw StreamWriter) error {
		defer body.Close()
		_, err := io.Copy(sw, body)
		return err
	})
}

// cancelCloser closes the reader, then ends the call's context.
type cancelCloser struct {
	io.ReadCloser
	cancel func()
}

// Unwrap returns the underlying reader, so a transport can find an *os.File.
func (c *cancelCloser) Unwrap() io.ReadCloser { return c.ReadCloser }

func (c *cancelCloser) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
