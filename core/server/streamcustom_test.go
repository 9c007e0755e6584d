package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// A resources/stream answer of unknown size from an embedder's own Stream
// handler goes out whole over the fasthttp front (chunked, ended cleanly),
// with MCP-Resource-Uri set by the core.
func TestCustomStreamUnknownSize(t *testing.T) {
	parallel(t)
	body := strings.Repeat("generated ", 10_000)
	ext := func(s *mcp.Server) {
		s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "gen:///{n}", Name: "gen", Streamable: true}, mcp.ResourceHandler{
			Read: func(*mcp.Call, string) (*mcp.Contents, error) { return nil, mcp.ErrNoResource },
			Stream: func(c *mcp.Call, uri string, maxSize int64) (*resstream.Answer, error) {
				return &resstream.Answer{MIMEType: "text/plain", Size: -1, Body: io.NopCloser(strings.NewReader(body))}, nil
			}})
	}
	c := serveMCP(t, Options{Extend: ext}, modernVersion, `{"resourceStreaming":{}}`)
	res := c.streamResource("gen:///1")
	if res.status != http.StatusOK || string(res.body) != body {
		t.Fatalf("status %d, %d bytes of %d", res.status, len(res.body), len(body))
	}
	if u := res.header.Get(resstream.HeaderResourceURI); u != "gen:///1" {
		t.Fatalf("MCP-Resource-Uri %q", u)
	}
}
