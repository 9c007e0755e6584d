package scan

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
)

// FileURIScheme is the scheme of SEP-2631 file URIs.
const FileURIScheme = "mcp-file"

// InlineRefused is the problem of a data URI where transferModes list
// only "upload".
const InlineRefused = `transferModes allow only "upload": send an mcp-file URI (files/authorizeUpload)`

// fileURIRefused is the problem of a file URI where it cannot be opened.
const fileURIRefused = `scheme "mcp-file" is not accepted here: a data: URI is required`

// AllowsInline reports whether spec lets a data URI in (no transferModes,
// or "inline" among them).
func (spec FileSpec) AllowsInline() bool {
	return len(spec.TransferModes) == 0 || slices.Contains(spec.TransferModes, "inline")
}

// AllowsUpload reports whether spec lets a file URI in (no transferModes,
// or "upload" among them).
func (spec FileSpec) AllowsUpload() bool {
	return len(spec.TransferModes) == 0 || slices.Contains(spec.TransferModes, "upload")
}

// IsFileURI reports whether s claims the mcp-file scheme (any case).
func IsFileURI(s string) bool {
	return len(s) > len(FileURIScheme) && strings.EqualFold(s[:len(FileURIScheme)+1], FileURIScheme+":")
}

// FileURI is a file URI to open for a caller; Argument is the argument or
// field it came in (package mcp's Options.OpenFileURI).
type FileURI struct {
	Ctx           context.Context
	Principal     string
	Scopes        []string
	URI, Argument string
}

// FileSource is an opened file URI: its bytes, their media type and size.
type FileSource struct {
	MediaType string
	Size      int64
	Body      io.ReadCloser
}

// FileURIOpener opens a file URI for its caller: an error with a
// Problem() string method refuses it, naming what is wrong; any other is
// the server's.
type FileURIOpener func(u FileURI) (*FileSource, error)

// FileURIValue serves an x-mcp-file value raw that is a file URI: ok
// reports that it was one. open (nil: file URIs are not taken) opens it
// for req, whose Argument names the value. The File reads the opened
// bytes, checked against spec's maxSize and accept; Release closes them.
func FileURIValue(raw json.RawMessage, spec FileSpec, open FileURIOpener, req FileURI) (f *File, ok bool, err error) {
	var v string
	if json.Unmarshal(raw, &v) != nil || !IsFileURI(v) {
		return nil, false, nil
	}
	name := req.Argument
	if open == nil || !spec.AllowsUpload() {
		return &File{Name: name, Problem: fileURIRefused}, true, nil
	}
	req.URI = v
	src, err := open(req)
	var refused interface{ Problem() string }
	switch {
	case errors.As(err, &refused):
		return &File{Name: name, Problem: refused.Problem()}, true, nil
	case err != nil:
		return nil, true, err
	}
	f = &File{Name: name, Header: codec.DataURIHeader{MediaType: src.MediaType}, Size: src.Size, body: src.Body}
	f.check(spec)
	return f, true, nil
}
