package mcp

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// File is an x-mcp-file input (SEP-2356): a data URI decoded while it
// arrived, with its descriptor's maxSize and accept enforced as bytes came
// in, so memory stays flat whatever its size. Its payload went to the
// tool's [FileSink] (see [File.Sink]) or to a spool read through
// [File.Reader]. The server frees it when the call ends; [File.Abort]
// frees it sooner.
type File struct {
	// Name is the argument (or elicitation field) it came in.
	Name string
	// MediaType is the data URI's media type: type/subtype, plus the
	// charset of text.
	MediaType string
	// Size is the decoded payload's length in bytes.
	Size int64

	f *scan.File
}

// Reader reads the payload from its spool (or, for a small value, from
// memory). It is never nil: for a payload that went to a [FileSink] (read
// it there, [File.Sink]) it fails.
func (f *File) Reader() io.Reader { return f.f.Payload() }

// Sink is the Sink the tool's [FileSink] chose for the payload, or nil
// when the payload was spooled.
func (f *File) Sink() Sink {
	if s := f.f.Sink(); s != nil {
		return s
	}
	return nil
}

// Keep tells the server the handler kept the payload (committed its sink):
// the server will not abort the sink when the call ends.
func (f *File) Keep() { f.f.Keep() }

// Abort frees the payload now: the sink is aborted (unless kept) and the
// spool removed. The server does the same when the call ends.
func (f *File) Abort() { f.f.Release() }

// FileError is a file input the server refused, in the client's terms: the
// handler returns it as it is and the client gets an isError result naming
// the argument ("Argument \"file\": file is larger than maxSize 1024
// bytes"). A [FileSink] returns one to refuse a value before its first
// byte (Arg may then name another argument, "key" say).
type FileError struct {
	// Arg is the argument (or elicitation field) at fault.
	Arg string
	// Reason says what is wrong with it.
	Reason string
	// Limit is the byte limit a file too large broke (its maxSize, or the
	// server's MaxFileBytes); 0 for other reasons.
	Limit int64

	field bool // an elicitation field, not a tool argument
	bare  bool // Reason follows the name ("is required")
}

// Problem is Reason, what an [Options].OpenFileURI refusal says.
func (e *FileError) Problem() string { return e.Reason }

func (e *FileError) Error() string {
	what := "Argument"
	if e.field {
		what = "Field"
	}
	if e.bare {
		return fmt.Sprintf("%s %q %s", what, e.Arg, e.Reason)
	}
	return fmt.Sprintf("%s %q: %s", what, e.Arg, e.Reason)
}

// result is the isError result the client gets for e.
func (e *FileError) result() *ToolResult { return ToolError("%s", e.Error()) }

// fileValue returns the file at path of fs (raw is its value in the
// rebuilt message), checked against spec: a *FileError for a value the
// client must fix, another error for a payload the server lost.
func fileValue(c *Call, fs *scan.Files, path, name string, raw json.RawMessage, spec scan.FileSpec, field bool) (*File, error) {
	sf, isURI, err := c.fileURI(name, raw, spec) // SEP-2631
	if err != nil {
		return nil, err
	} else if !isURI {
		sf, _ = fs.Value(path, name, raw, spec)
	}
	if sf == nil {
		reason := "is required"
		if raw != nil && string(raw) != "null" {
			reason = "must be a string"
		}
		return nil, &FileError{Arg: name, Reason: reason, field: field, bare: true}
	}
	if sf.Problem != "" {
		return nil, &FileError{Arg: sf.Name, Reason: sf.Problem, Limit: sf.Limit, field: field}
	}
	if sf.Err != nil {
		// The bytes were lost while they arrived (the sink or the spool
		// failed): the server's fault, an internal error.
		return nil, fmt.Errorf("mcp: argument %q: %w", name, sf.Err)
	}
	return &File{Name: sf.Name, MediaType: sf.MediaType(), Size: sf.Size, f: sf}, nil
}
