package gateway

import (
	"context"
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
)

// Uploaded files to inline upstreams (docs/gateway.md): the gateway's
// tools/list advertises transferModes ["inline","upload"] on the upstream's
// x-mcp-file arguments, a client uploads the file to the gateway
// (SEP-2631, docs/files.md) and passes its mcp-file:// URI, and the gate
// (fileargs.Gate's Expand) replaces the URI by a data URI encoded from the
// gateway's store as the body streams upstream.

// FileOpener opens the SEP-2631 files a principal uploaded to the gateway
// (core/server's: core/blobs's file model on the server's backend).
type FileOpener interface {
	// OpenFile opens principal's file uri, uploaded: its media type, size
	// and bytes. A *FileURIError refuses it in the client's terms.
	OpenFile(ctx context.Context, principal, uri string) (OpenedFile, error)
}

// OpenedFile is a file a FileOpener opened; the gateway closes Body.
type OpenedFile struct {
	MediaType string
	Size      int64
	Body      io.ReadCloser
}

// FileURIError refuses a file URI: Reason is docs/files.md's data.reason
// (fileNotFound, uploadIncomplete, invalidUri), Problem what the client
// reads.
type FileURIError struct{ Reason, Problem string }

func (e *FileURIError) Error() string { return "gateway: file URI refused: " + e.Problem }

// expandFiles readies gate to expand the file URIs of principal's call
// (nothing without a FileOpener).
func (g *Gateway) expandFiles(ctx context.Context, gate *fileargs.Gate, principal string) {
	if g.opts.Files.Opener != nil {
		gate.Expand(&callOpener{ctx: ctx, principal: principal, o: g.opts.Files.Opener})
	}
}

// callOpener is the fileargs.Opener of one call.
type callOpener struct {
	ctx       context.Context
	principal string
	o         FileOpener
}

func (c *callOpener) Open(arg, uri string) (fileargs.Opened, error) {
	f, err := c.o.OpenFile(c.ctx, c.principal, uri)
	if fe, ok := err.(*FileURIError); ok {
		return fileargs.Opened{}, &fileargs.Refusal{Arg: arg, Problem: fe.Problem, Reason: fe.Reason}
	}
	if err != nil {
		return fileargs.Opened{}, err
	}
	return fileargs.Opened{MediaType: f.MediaType, Size: f.Size, Body: f.Body}, nil
}

// doUnlessRefused sends req, unless gate refused a file of the call while
// it read the body ahead (a file URI refused): then nothing goes upstream.
func (g *Gateway) doUnlessRefused(req *http.Request, gate *fileargs.Gate) (*http.Response, *upstreamError) {
	if gate.Refused() != nil {
		return nil, nil
	}
	return g.do(req)
}
