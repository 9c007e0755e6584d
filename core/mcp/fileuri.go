package mcp

import (
	"encoding/json"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// FileURI is an SEP-2631 mcp-file URI to open for a caller, FileSource the
// opened file, and a FileURIOpener ([Options].OpenFileURI) opens one (a
// *[FileError] refuses it in the client's terms).
type (
	FileURI       = scan.FileURI
	FileSource    = scan.FileSource
	FileURIOpener = scan.FileURIOpener
)

// fileURI serves an x-mcp-file value that is a file URI (ok false for any
// other value), opened as c's caller.
func (c *Call) fileURI(name string, raw json.RawMessage, spec scan.FileSpec) (*scan.File, bool, error) {
	return scan.FileURIValue(raw, spec, c.srv.opts.OpenFileURI, FileURI{Ctx: c.ctx, Principal: c.Principal(), Scopes: c.Scopes(), Argument: name})
}
