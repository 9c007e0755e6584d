package mcp

import (
	"errors"
	"io"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// resources/stream (SEP-2532, a proposal; docs/protocol.md): the method's wire
// pieces (answer, capability, errors) are package resstream; serving it is
// here.

// ErrNoResource is a ResourceHandler's answer for a URI it does not serve.
var ErrNoResource = errors.New("mcp: no such resource")

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
	ok, maxSize := resstream.Capability(c.caps)
	if !ok {
		if c.modern {
			return nil, MissingCapability("resourceStreaming")
		}
		return nil, resstream.NotSupported(uri, "the client did not declare the resourceStreaming capability")
	}
	for _, t := range s.templates {
		if t.Stream == nil {
			continue
		}
		ans, err := t.Stream(c, uri, maxSize)
		if err == nil {
			return resstream.Check(uri, ans, maxSize)
		}
		if !errors.Is(err, ErrNoResource) {
			return nil, err
		}
	}
	if ct, err := s.readAny(c, uri); err == nil {
		if ct.Body != nil {
			ct.Body.Close()
		}
		return nil, resstream.NotSupported(uri, "the resource does not stream")
	}
	return nil, c.NotFound(uri)
}

// writeStreamAnswer sends a direct or redirect answer; done runs once the
// body is out (or never will be). MCP-Resource-Uri names the answer's
// canonical URI (a handler's own header of that name wins).
func writeStreamAnswer(w ResponseWriter, a *resstream.Answer, done func()) {
	status, header := resstream.Headers(a)
	for _, h := range header {
		w.SetHeader(h[0], h[1])
	}
	w.SetStatus(status)
	if a.Body == nil {
		done()
		return
	}
	body := resstream.WithDone(a.Body, done)
	if bs, ok := transportWriter(w).(resstream.BodySender); ok {
		bs.SendBody(body, a.Size)
		return
	}
	w.SetBodyStream(a.Size, func(sw StreamWriter) error {
		defer body.Close()
		_, err := io.Copy(sw, body)
		return err
	})
}
