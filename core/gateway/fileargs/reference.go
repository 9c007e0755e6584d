package fileargs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
	// Keep begins the file of argument arg, of the data URI's mediaType.
	Keep(arg, mediaType string) (File, error)
}

// File is a file being stored: its decoded bytes are written to it.
type File interface {
	io.Writer
	// Commit makes the file, whose facts f are, visible and returns its
	// link, which the upstream gets (with f in its query) in place of the
	// data URI.
	Commit(f Facts) (string, error)
	// Abort discards the file.
	Abort()
}

// Facts are what the upstream learns of a file delivered by reference, in
// its link's query: name, type, size, sha256.
type Facts struct {
	Name      string // the data URI's name parameter (its last path segment), else the argument's name
	MediaType string // the data URI's
	Size      int64  // decoded bytes
	SHA256    string // lower-case hex, of the decoded bytes
}

// withFacts is link with f in its query.
func withFacts(link string, f Facts) string {
	q := url.Values{"name": {f.Name}, "type": {f.MediaType}, "size": {strconv.FormatInt(f.Size, 10)}, "sha256": {f.SHA256}}
	if strings.Contains(link, "?") {
		return link + "&" + q.Encode()
	}
	return link + "?" + q.Encode()
}

// fileName is the name a file delivered by reference goes by: the data
// URI's name parameter, its last path segment, when it is a plausible file
// name (valid UTF-8, no control characters, at most 255 bytes), else the
// argument's name.
func fileName(name, arg string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	ok := name != "" && name != "." && name != ".." && len(name) <= 255 && utf8.ValidString(name) &&
		strings.IndexFunc(name, unicode.IsControl) < 0
	if !ok {
		return arg
	}
	return name
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
	f, err := store.Keep(arg, dr.Header.MediaType)
	if err != nil {
		return refuse(storeFailed(arg, err))
	}
	c := &fileCounter{arg: arg, spec: spec}
	w := &keptWriter{file: f, sum: sha256.New()}
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
		case w.failed != nil:
			ref = storeFailed(arg, w.failed)
		default:
			ref = brokenFile(arg, err)
		}
		return refuse(ref)
	}
	facts := Facts{Name: fileName(name, arg), MediaType: dr.Header.MediaType, Size: w.n, SHA256: hex.EncodeToString(w.sum.Sum(nil))}
	link, err := f.Commit(facts)
	if err != nil {
		f.Abort()
		return refuse(storeFailed(arg, err))
	}
	return withFacts(link, facts), nil
}

// keptWriter writes to a File, counting and hashing what it took, and
// remembers the File's failure.
type keptWriter struct {
	file   File
	sum    hash.Hash
	n      int64
	failed error
}

func (w *keptWriter) Write(p []byte) (int, error) {
	n, err := w.file.Write(p)
	w.sum.Write(p[:n])
	w.n += int64(n)
	if err != nil {
		w.failed = err
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

func storeFailed(arg string, err error) *Refusal {
	return &Refusal{Arg: arg, Problem: "the gateway could not store the file", Failed: true, Cause: err}
}
