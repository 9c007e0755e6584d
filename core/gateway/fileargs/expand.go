package fileargs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
)

// Expansion (docs/gateway.md, "Uploaded files to inline upstreams"): the
// gateway advertises transferModes ["inline","upload"] on the x-mcp-file
// arguments of an upstream that only takes inline data, and a caller may
// then pass the mcp-file:// URI of a file it uploaded to the gateway. The
// URI string is withheld while it is read (it is short: at most
// maxCapture bytes), then opened through an [Opener] and replaced, as the
// body streams on, by "data:<type>;base64,…" encoded from the store a
// chunk at a time: memory stays flat whatever the file's size.

// FileURIPrefix begins an SEP-2631 file URI.
const FileURIPrefix = "mcp-file://"

// Opener opens the file URIs of one call's arguments.
type Opener interface {
	// Open opens uri, given as argument arg: the caller's own file, whose
	// bytes are uploaded. A *Refusal refuses the URI in the client's
	// terms (its Reason set); another error is the gateway's failure.
	Open(arg, uri string) (Opened, error)
}

// Opened is a file opened for expansion.
type Opened struct {
	MediaType string
	Size      int64
	Body      io.ReadCloser
}

// Reasons of the refusals of a file URI (docs/files.md's data.reason).
const (
	ReasonInvalidURI       = "invalidUri"
	ReasonFileNotFound     = "fileNotFound"
	ReasonUploadIncomplete = "uploadIncomplete"
	ReasonMaxSizeExceeded  = "maxSizeExceeded"
	ReasonInvalidMediaType = "invalidMediaType"
)

// splice is a data URI to hand on at offset at of the rewritten body.
type splice struct {
	at int
	r  *dataURIReader
}

// expands reports whether a file URI given as arg is expanded: the
// argument is inline and the call has an Opener.
func (fc *fileCheck) expands(arg string) bool {
	spec, ok := fc.specs[arg]
	return ok && fc.opener != nil && !spec.TakesUpload() && !(fc.store != nil && spec.ByReference())
}

// expand opens uri, given as arg, and checks it against arg's Spec.
func (fc *fileCheck) expand(arg, uri string) (*dataURIReader, error) {
	f, err := fc.opener.Open(arg, uri)
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		return nil, ref
	case err != nil:
		return nil, &Refusal{Arg: arg, Problem: "the gateway could not open the file", Failed: true, Cause: err}
	}
	spec := fc.specs[arg]
	switch {
	case spec.MaxSize > 0 && f.Size > spec.MaxSize:
		ref = &Refusal{Arg: arg, Problem: fmt.Sprintf("file is larger than maxSize %d bytes", spec.MaxSize),
			Limit: spec.MaxSize, Reason: ReasonMaxSizeExceeded}
	case !codec.MatchAccept(spec.Accept, f.MediaType):
		ref = &Refusal{Arg: arg, Problem: fmt.Sprintf("media type %q is not accepted (accept: %s)",
			f.MediaType, strings.Join(spec.Accept, ", ")), Reason: ReasonInvalidMediaType}
	}
	if ref != nil {
		_ = f.Body.Close()
		return nil, ref
	}
	return newDataURIReader(arg, f), nil
}

// peekString reads the string of a file argument that may be a file URI,
// withholding it: a whole URI is expanded (the string's place in the
// rewritten body becomes a splice), anything else is released as it was.
func (w *walker) peekString(p []byte) (int, error) {
	q := p[:min(len(p), maxCapture+1-len(w.capt))]
	n := w.skipString(q)
	closed := w.st != wPeekStr
	end := n
	if closed {
		end--
	}
	w.capt = append(w.capt, q[:end]...)
	switch {
	case closed && isURIPrefix(w.capt, true):
		return n, w.expandURI()
	case closed:
		return n, w.release(append(w.capt, '"'))
	case !isURIPrefix(w.capt, false) || len(w.capt) > maxCapture:
		return n, w.release(w.capt)
	}
	return n, nil
}

// isURIPrefix reports whether raw may begin (whole: is) a file URI.
func isURIPrefix(raw []byte, whole bool) bool {
	k := min(len(raw), len(FileURIPrefix))
	if !bytes.Equal(raw[:k], []byte(FileURIPrefix)[:k]) {
		return false
	}
	return !whole || len(raw) > len(FileURIPrefix)
}

// expandURI opens the file URI read and splices its data URI into the
// rewritten body, after the string's opening quote.
func (w *walker) expandURI() error {
	r, err := w.sink.expand(w.peekArg, unquoteKey(w.capt))
	if err != nil {
		return err
	}
	w.splices = append(w.splices, splice{at: len(w.out), r: r})
	w.out = append(w.out, '"')
	return nil
}

// release walks raw, the string's bytes withheld so far, as a file
// argument's string: checked, and forwarded unless held.
func (w *walker) release(raw []byte) error {
	raw = bytes.Clone(raw)
	w.st, w.uhex, w.esc, w.hold = wFileStr, nil, false, false
	if w.sink.begin(w.peekArg) != nil {
		w.st = wSkipStr
	} else {
		w.hold = w.sink.holds()
	}
	return w.feed(raw)
}

// dataURIReader reads "data:<type>;base64,<…>" (JSON string contents),
// the base64 encoded from the file's body a chunk at a time.
type dataURIReader struct {
	arg  string
	body io.ReadCloser
	in   []byte
	out  []byte // encoded, not yet read: out[off:]
	off  int
	eof  bool
}

// expandChunk is the bytes of the file encoded at a time (64 KiB of
// base64).
const expandChunk = 48 << 10

func newDataURIReader(arg string, f Opened) *dataURIReader {
	mt := f.MediaType
	if mt == "" {
		mt = "application/octet-stream"
	}
	head := appendJSONContents(nil, "data:"+mt+";base64,")
	return &dataURIReader{arg: arg, body: f.Body, out: head}
}

// Read hands on the data URI; an error reading the file is a failed
// *Refusal.
func (d *dataURIReader) Read(p []byte) (int, error) {
	for d.off == len(d.out) {
		if d.eof {
			return 0, io.EOF
		}
		if err := d.encodeNext(); err != nil {
			return 0, err
		}
	}
	n := copy(p, d.out[d.off:])
	d.off += n
	return n, nil
}

// encodeNext reads and encodes the file's next chunk.
func (d *dataURIReader) encodeNext() error {
	if d.in == nil {
		d.in = make([]byte, expandChunk)
		d.out = make([]byte, 0, codec.StdEncoding.EncodedLen(expandChunk))
	}
	n, err := io.ReadFull(d.body, d.in)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		d.eof = true
	case err != nil:
		return &Refusal{Arg: d.arg, Problem: "the gateway could not read the file", Failed: true, Cause: err}
	}
	d.out = d.out[:codec.StdEncoding.EncodedLen(n)]
	codec.StdEncoding.Encode(d.out, d.in[:n])
	d.off = 0
	return nil
}

// Close closes the file's body; nil-safe.
func (d *dataURIReader) Close() {
	if d != nil {
		_ = d.body.Close()
	}
}
