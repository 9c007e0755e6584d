package fileargs

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
)

// By-reference delivery (docs/gateway.md, "By-reference delivery"): an
// upstream that marks a file argument {"x-mcp-file":{…,"delivery":
// "reference"}} gets, in place of the data URI, a link to the file, which
// the gateway stored as the string streamed through.

// DeliveryReference is the x-mcp-file "delivery" value of an argument
// delivered by reference.
const DeliveryReference = "reference"

// ByReference reports whether the upstream takes the file by reference.
func (s Spec) ByReference() bool { return s.Delivery == DeliveryReference }

// Store keeps the files of arguments delivered by reference, for one
// call.
type Store interface {
	// Keep begins the file of argument arg; name is the data URI's name
	// parameter ("" without one), mediaType its media type.
	Keep(arg, name, mediaType string) (File, error)
}

// File is a file being stored: its decoded bytes are written to it.
type File interface {
	io.Writer
	// Commit makes the file visible and returns the string the upstream
	// gets in place of the data URI (its link).
	Commit() (string, error)
	// Abort discards the file.
	Abort()
}

// keepDataURI decodes the data URI r yields into a File of store,
// checking it against spec as checkDataURI does, and returns its link. A
// value that is not a data URI, or whose base64 is broken, is refused
// (the upstream expects a link), and so is a file the store fails to keep
// (Failed). Nothing stays stored on a refusal.
func keepDataURI(r *io.PipeReader, arg string, spec Spec, store Store) (string, *Refusal) {
	refuse := func(ref *Refusal) (string, *Refusal) {
		r.CloseWithError(ref)
		return "", ref
	}
	dr, err := codec.NewDataURIReader(r)
	if err != nil {
		return refuse(brokenFile(arg, err))
	}
	if !codec.MatchAccept(spec.Accept, dr.Header.MediaType) {
		return refuse(&Refusal{Arg: arg, Problem: fmt.Sprintf("media type %q is not accepted (accept: %s)",
			dr.Header.MediaType, strings.Join(spec.Accept, ", "))})
	}
	name, _ := dr.Header.Param("name")
	f, err := store.Keep(arg, name, dr.Header.MediaType)
	if err != nil {
		return refuse(storeFailed(arg))
	}
	c := &fileCounter{arg: arg, spec: spec}
	w := &keptWriter{file: f}
	_, err = dr.WriteTo(io.MultiWriter(c, w)) // counted (and refused) before stored
	if err == nil {
		if ref := c.sniff(); ref != nil {
			err = ref
		}
	}
	if err != nil {
		f.Abort()
		var ref *Refusal
		switch {
		case errors.As(err, &ref):
		case w.failed:
			ref = storeFailed(arg)
		default:
			ref = brokenFile(arg, err)
		}
		return refuse(ref)
	}
	link, err := f.Commit()
	if err != nil {
		f.Abort()
		return refuse(storeFailed(arg))
	}
	return link, nil
}

// keptWriter writes to a File and remembers whether the File failed.
type keptWriter struct {
	file   File
	failed bool
}

func (w *keptWriter) Write(p []byte) (int, error) {
	n, err := w.file.Write(p)
	if err != nil {
		w.failed = true
	}
	return n, err
}

// brokenFile is the refusal of a file argument that is not a readable
// data URI (err says why).
func brokenFile(arg string, err error) *Refusal {
	var de *codec.DataURIError
	if errors.As(err, &de) {
		return &Refusal{Arg: arg, Problem: "not a valid data URI: " + de.Reason}
	}
	return &Refusal{Arg: arg, Problem: "the file ended early"}
}

func storeFailed(arg string) *Refusal {
	return &Refusal{Arg: arg, Problem: "the gateway could not store the file", Failed: true}
}
