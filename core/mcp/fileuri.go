package mcp

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// FileURIScheme is the scheme of SEP-2631 file URIs.
const FileURIScheme = "mcp-file"

// FileURI is a file URI to open for a caller ([Options].OpenFileURI).
type FileURI struct {
	Ctx       context.Context
	Principal string
	Scopes    []string
	URI       string
	// Argument is the argument (or elicitation field) it came in.
	Argument string
}

// FileSource is an opened file URI: its bytes, their media type and size.
type FileSource struct {
	MediaType string
	Size      int64
	Body      io.ReadCloser
}

// FileURIOpener opens a file URI for its caller. A *[FileError] refuses it
// in the client's terms (no such file, not the caller's, not usable yet);
// any other error is the server's.
type FileURIOpener func(u FileURI) (*FileSource, error)

// openURI opens a file URI for the caller of one call.
type openURI func(arg, uri string) (*FileSource, error)

// fileURIOpener opens file URIs for c's caller; nil when the server takes
// none.
func (c *Call) fileURIOpener() openURI {
	open := c.srv.opts.OpenFileURI
	if open == nil {
		return nil
	}
	return func(arg, uri string) (*FileSource, error) {
		return open(FileURI{Ctx: c.ctx, Principal: c.Principal(), Scopes: c.Scopes(), URI: uri, Argument: arg})
	}
}

// inlineRefused is the problem of a data URI where transferModes list only
// "upload".
const inlineRefused = `transferModes allow only "upload": send an mcp-file URI (files/authorizeUpload)`

// allowsUpload reports whether spec lets a file URI in (transferModes
// absent, or listing "upload").
func allowsUpload(spec scan.FileSpec) bool {
	return len(spec.TransferModes) == 0 || slices.Contains(spec.TransferModes, "upload")
}

// allowsInline reports whether spec lets a data URI in.
func allowsInline(spec scan.FileSpec) bool {
	return len(spec.TransferModes) == 0 || slices.Contains(spec.TransferModes, "inline")
}

// fileURIValue serves an x-mcp-file value that is a file URI, or a data
// URI where only uploads are allowed: ok reports that it did (f or err is
// the answer); a value it leaves alone goes to the data URI path.
func fileURIValue(name string, raw json.RawMessage, spec scan.FileSpec, field bool, open openURI) (f *File, err error, ok bool) {
	var v string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return nil, nil, false
	}
	isFileURI := len(v) > len(FileURIScheme) && strings.EqualFold(v[:len(FileURIScheme)+1], FileURIScheme+":")
	switch {
	case !isFileURI:
		return nil, nil, false
	case open == nil || !allowsUpload(spec):
		return nil, &FileError{Arg: name, Reason: "scheme \"mcp-file\" is not accepted here: a data: URI is required", field: field}, true
	}
	src, err := open(name, v)
	if err != nil {
		if fe, isFE := err.(*FileError); isFE {
			fe.field = field
		}
		return nil, err, true
	}
	if bad := checkSource(src, spec); bad != "" {
		_ = src.Body.Close()
		return nil, &FileError{Arg: name, Reason: bad, Limit: spec.MaxSize, field: field}, true
	}
	return &File{Name: name, MediaType: src.MediaType, Size: src.Size, src: src.Body}, nil, true
}

// checkSource applies spec to an opened file URI: maxSize and accept.
func checkSource(src *FileSource, spec scan.FileSpec) string {
	mt, _, _ := strings.Cut(src.MediaType, ";")
	switch {
	case spec.MaxSize > 0 && src.Size > spec.MaxSize:
		return scan.SizeProblem(spec.MaxSize)
	case len(spec.Accept) > 0 && !codec.MatchAccept(spec.Accept, strings.TrimSpace(mt)):
		return scan.AcceptProblem(strings.TrimSpace(mt), spec.Accept)
	}
	return ""
}
