package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/core/codec"
)

// FileSpec is an x-mcp-file descriptor (docs/protocol.md, "File inputs").
type FileSpec struct {
	Accept  []string `json:"accept,omitempty"`
	MaxSize int64    `json:"maxSize,omitempty"`
	// TransferModes are SEP-2631's: "inline" (a data URI), "upload" (a
	// file URI, FileURIValue); none means either.
	TransferModes []string `json:"transferModes,omitempty"`
}

// Sink takes a file's decoded bytes straight away (a storage upload, say).
// Abort discards what was written; the scanner calls it when the value is
// rejected, and [File.Release] calls it unless the owner kept the bytes
// (for instance committed them, after which Abort must be a no-op).
type Sink interface {
	io.Writer
	Abort()
}

// HeadLen is how many leading payload bytes a File keeps for content
// sniffing.
const HeadLen = 512

// errFileTooLarge stops a decode at the file's size limit.
var errFileTooLarge = errors.New("scan: file too large")

// File is a data URI (or another long string) taken out of a message while
// it arrived. Its payload went to a Sink, to a spool, or (a small data URI
// decoded from an ordinary string) is held inline; a rejected value has a
// Problem and no payload.
type File struct {
	// Name is the argument or field name (the last element of its path).
	Name string
	// Header is the data URI's header (media type, parameters).
	Header codec.DataURIHeader
	// Size is the payload's length in bytes (raw: the string's length).
	Size int64
	// Head holds the first HeadLen payload bytes.
	Head []byte
	// Problem says why the value is rejected; "" when it is fine so far.
	Problem string
	// Limit is the byte limit a value too large broke (its maxSize, or the
	// server's limit); 0 for any other problem.
	Limit int64
	// Err is the server's failure to keep the payload: the sink or spool
	// could not be opened or written (a full disk, a failing store). The
	// value was still read to its end and checked, so the message parses;
	// the payload is lost, Reader fails with Err, and the handler answers
	// with an internal error. nil when the payload was kept.
	Err error

	sink     Sink
	body     io.ReadCloser // an opened file URI's bytes (FileURIValue)
	spool    *os.File
	raw      bool
	inline   []byte
	diverted bool
	kept     bool
}

// Diverted reports a value taken out of the message while it arrived: a
// string over 64 KiB, or a data URI routed to a sink. The rebuilt message
// (and so a handler's view of the arguments) reads "" in its place.
func (f *File) Diverted() bool { return f.diverted }

// Refusal is the error a Route's Open (a tool's file sink) returns to
// refuse a data URI before its first payload byte, for a reason the
// sender can fix (a key that breaks the key rules, say): the File gets
// Problem and Name from it instead of a payload, and the rest of the
// string is read and discarded (up to the drain limit), as for a value
// that breaks its descriptor.
type Refusal struct {
	Argument string // the argument the problem is about ("key")
	Problem  string
}

func (e *Refusal) Error() string { return fmt.Sprintf("scan: argument %q: %s", e.Argument, e.Problem) }

// Sink returns the sink the payload was decoded into, or nil.
func (f *File) Sink() Sink { return f.sink }

// Raw reports a long string that is not a data URI.
func (f *File) Raw() bool { return f.raw }

// Reader returns the spooled or inline payload; nil when it went to a sink
// or the value was rejected; a reader failing with Err when the server
// lost it.
func (f *File) Reader() io.Reader {
	switch {
	case f.Err != nil:
		return errReader{f.Err}
	case f.body != nil:
		return f.body
	case f.spool != nil:
		return f.spool
	case f.inline != nil || (f.Problem == "" && f.sink == nil):
		return bytes.NewReader(f.inline)
	}
	return nil
}

// ErrInSink is what Payload reads of a payload that went to a sink.
var ErrInSink = errors.New("scan: the payload went to its sink")

// Payload is Reader, never nil: for a payload that went to a sink it
// fails with ErrInSink.
func (f *File) Payload() io.Reader {
	if r := f.Reader(); r != nil {
		return r
	}
	return errReader{ErrInSink}
}

// errReader fails every Read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Keep tells Release that the sink's bytes were kept (committed): it is
// not aborted.
func (f *File) Keep() { f.kept = true }

// Release aborts the sink, unless it was kept, and closes the spool (a
// spool file is unlinked, so it disappears).
func (f *File) Release() {
	if f.sink != nil && !f.kept {
		f.sink.Abort()
	}
	if f.spool != nil {
		_ = f.spool.Close()
	}
	if f.body != nil {
		_ = f.body.Close()
	}
}

// Reject marks the file rejected for why and frees its payload.
func (f *File) Reject(why string) {
	f.Release()
	f.Problem, f.sink, f.spool, f.inline, f.body = why, nil, nil, nil, nil
}

// MediaType is the media type to store for the file: type/subtype, plus the
// charset of text.
func (f *File) MediaType() string {
	mt := f.Header.MediaType
	if cs, ok := f.Header.Param("charset"); ok && strings.HasPrefix(mt, "text/") {
		mt += "; charset=" + strings.ToLower(cs)
	}
	return mt
}

// check rejects a file that breaks spec, unless it is rejected already.
func (f *File) check(spec FileSpec) {
	switch {
	case f.Problem != "":
	case len(spec.Accept) > 0 && !codec.MatchAccept(spec.Accept, f.Header.MediaType):
		f.Reject(AcceptProblem(f.Header.MediaType, spec.Accept))
	case spec.MaxSize > 0 && f.Size > spec.MaxSize:
		f.Reject(SizeProblem(spec.MaxSize))
		f.Limit = spec.MaxSize
	}
}

// Files holds the Files taken out of one message, by JSON path.
type Files struct {
	budget   int64 // decoded bytes left for the whole message
	spoolDir string
	mu       sync.Mutex
	m        map[string]*File
	kept     bool
}

// Get returns the File at path, or nil.
func (fs *Files) Get(path string) *File {
	if fs == nil {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.m[path]
}

// Len is the number of Files taken out.
func (fs *Files) Len() int {
	if fs == nil {
		return 0
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.m)
}

func (fs *Files) put(path string, f *File) {
	f.diverted = true
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = map[string]*File{}
	}
	if old := fs.m[path]; old != nil {
		old.Release() // a duplicate key: the last one wins, as in encoding/json
	}
	fs.m[path] = f
}

// Keep hands the set to another owner (a call that outlives the request, a
// waiting tool); Release then does nothing and the owner calls Discard.
func (fs *Files) Keep() {
	if fs != nil {
		fs.mu.Lock()
		fs.kept = true
		fs.mu.Unlock()
	}
}

// Release discards every File unless the set was handed over with Keep.
func (fs *Files) Release() {
	if fs == nil {
		return
	}
	fs.mu.Lock()
	kept := fs.kept
	fs.mu.Unlock()
	if !kept {
		fs.Discard()
	}
}

// Discard releases every File.
func (fs *Files) Discard() {
	if fs == nil {
		return
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.m {
		f.Release()
	}
	fs.m = nil
}

// lastElem is the key or index a path ends with.
func lastElem(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return UnescapeElem(path[i+1:])
	}
	return UnescapeElem(path)
}

// drop releases the Files at path and under it: a repeated member
// replaces them (the last one wins, as in encoding/json).
func (fs *Files) drop(path string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.m) == 0 { // the common case: no string taken out so far
		return
	}
	for p, f := range fs.m {
		if p == path || strings.HasPrefix(p, path+"/") {
			f.Release()
			delete(fs.m, p)
		}
	}
}

// tempFile returns an unlinked temporary file: it disappears when closed,
// whatever happens to the process.
func (fs *Files) tempFile() (*os.File, error) {
	f, err := os.CreateTemp(fs.spoolDir, "mcpblob-spool-*")
	if err != nil {
		return nil, fmt.Errorf("scan: spool: %w", err)
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// headSink counts, bounds and keeps the first bytes of what passes to w.
// The first error of w is kept in werr and not returned: from then on the
// bytes are counted, checked and dropped, so the value is still read to
// its end (a full disk is the server's failure, not a reason to leave the
// message unparsed).
type headSink struct {
	w    io.Writer
	max  int64
	n    int64
	head []byte
	werr error
}

func (h *headSink) Write(p []byte) (int, error) {
	if h.max > 0 && h.n+int64(len(p)) > h.max {
		return 0, errFileTooLarge
	}
	if len(h.head) < HeadLen {
		h.head = append(h.head, p[:min(len(p), HeadLen-len(h.head))]...)
	}
	if h.werr == nil {
		if _, err := h.w.Write(p); err != nil {
			h.werr = err
		}
	}
	h.n += int64(len(p))
	return len(p), nil
}

// headTee keeps the first bytes read through it (for the scheme of a
// rejected URI).
type headTee struct {
	r    io.Reader
	head []byte
}

func (t *headTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if len(t.head) < 64 {
		t.head = append(t.head, p[:min(n, 64-len(t.head))]...)
	}
	return n, err
}

// schemeOf returns the URI scheme at the start of s ("" when none).
func schemeOf(s []byte) string {
	for i, c := range s {
		switch {
		case c == ':' && i > 0:
			return strings.ToLower(string(s[:i]))
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return ""
		}
	}
	return ""
}

func schemeProblem(head []byte) string {
	if sch := schemeOf(head); sch != "" {
		return fmt.Sprintf("scheme %q is not supported: a data: URI is required", sch)
	}
	return "not a URI: a data: URI is required"
}

// AcceptProblem is the problem of a media type outside an accept list.
func AcceptProblem(mt string, accept []string) string {
	return fmt.Sprintf("media type %q is not accepted (accept: %s)", mt, strings.Join(accept, ", "))
}

// SizeProblem is the problem of a file over a maxSize.
func SizeProblem(maxSize int64) string {
	return fmt.Sprintf("file is larger than maxSize %d bytes", maxSize)
}

// openFunc returns where a data URI's payload goes once its header passed.
type openFunc func(codec.DataURIHeader) (io.Writer, error)

// decodeDataURI decodes the data URI src yields, checking scheme, header,
// accept and the size limit as bytes arrive. Problems with the value are
// returned in f.Problem (the rest of src is then left unread); a failure to
// open or write the destination in f.Err (the value is then read to its
// end and dropped); err is an error of src.
func decodeDataURI(name string, spec FileSpec, src io.Reader, open openFunc, budget int64) (f *File, err error) {
	f = &File{Name: name}
	tee := &headTee{r: src}
	dr, err := codec.NewDataURIReader(tee)
	if err != nil {
		var de *codec.DataURIError
		switch {
		case !errors.As(err, &de):
			return nil, err
		case errors.Is(err, codec.ErrNotDataURI):
			f.Problem = schemeProblem(tee.head)
		default:
			f.Problem = "malformed data URI: " + de.Reason
		}
		return f, nil
	}
	f.Header = dr.Header
	if len(spec.Accept) > 0 && !codec.MatchAccept(spec.Accept, dr.Header.MediaType) {
		f.Problem = AcceptProblem(dr.Header.MediaType, spec.Accept)
		return f, nil
	}
	limit := spec.MaxSize
	if budget > 0 && (limit <= 0 || budget < limit) {
		limit = budget
	}
	dst, err := open(dr.Header)
	if refused := (*Refusal)(nil); errors.As(err, &refused) {
		f.Name, f.Problem = refused.Argument, refused.Problem
		return f, nil
	}
	// Any other failure to open is the server's: the value is still read
	// to its end (headSink records the error), so the message parses.
	sink := &headSink{w: dst, werr: err, max: limit}
	_, err = dr.WriteTo(sink)
	f.Size, f.Head, f.Err = sink.n, sink.head, sink.werr
	var de *codec.DataURIError
	switch {
	case err == nil:
	case errors.Is(err, errFileTooLarge):
		if spec.MaxSize > 0 && limit == spec.MaxSize {
			f.Problem = SizeProblem(spec.MaxSize)
		} else {
			f.Problem = fmt.Sprintf("file is larger than the server's limit of %d bytes", limit)
		}
		f.Limit = limit
	case errors.As(err, &de):
		f.Problem = "malformed data URI: " + de.Reason
	default:
		return nil, err
	}
	return f, nil
}

// decode takes a data URI out of the message: into the route's sink when
// it has one, else into a decoded spool.
func (fs *Files) decode(path string, route Route, src io.Reader) (*File, error) {
	var (
		sink  Sink
		spool *os.File
	)
	open := func(h codec.DataURIHeader) (io.Writer, error) {
		var err error
		if route.Open != nil {
			if sink, err = route.Open(h); sink != nil || err != nil {
				return sink, err
			}
		}
		spool, err = fs.tempFile()
		return spool, err
	}
	f, err := decodeDataURI(lastElem(path), route.Spec, src, open, fs.budget)
	if err != nil || f.Problem != "" || f.Err != nil {
		if sink != nil {
			sink.Abort()
		}
		if spool != nil {
			spool.Close()
		}
		if err != nil {
			return nil, err
		}
		fs.put(path, f)
		return f, nil
	}
	fs.budget -= f.Size
	f.sink, f.spool = sink, spool
	if spool != nil {
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			spool.Close()
			return nil, fmt.Errorf("scan: spool: %w", err)
		}
	}
	fs.put(path, f)
	return f, nil
}

// rawSpool takes any other long string out of the message, up to limit
// bytes. A spool that cannot be created or written loses the string (its
// File has Err) but the string is still read to its end.
func (fs *Files) rawSpool(path string, src io.Reader, limit int64) (*File, error) {
	f, err := fs.tempFile()
	sink := &headSink{w: f, werr: err, max: limit}
	if _, err := io.Copy(sink, src); err != nil {
		if f != nil {
			f.Close()
		}
		if errors.Is(err, errFileTooLarge) {
			return nil, ErrTooLarge
		}
		return nil, err
	}
	if sink.werr == nil {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			sink.werr = fmt.Errorf("scan: spool: %w", err)
		}
	}
	file := &File{Name: lastElem(path), Size: sink.n, Head: sink.head, spool: f, raw: true, Err: sink.werr}
	if sink.werr != nil && f != nil {
		f.Close()
		file.spool = nil
	}
	fs.put(path, file)
	return file, nil
}

// inline decodes a data URI held as an ordinary (small) string value.
func inline(name string, spec FileSpec, v string) *File {
	var buf bytes.Buffer
	f, err := decodeDataURI(name, spec, strings.NewReader(v), func(codec.DataURIHeader) (io.Writer, error) { return &buf, nil }, 0)
	if err != nil {
		return &File{Name: name, Problem: "malformed data URI"}
	}
	if f.Problem == "" {
		f.inline = buf.Bytes()
	}
	return f
}

// Value returns the file at path: taken out of the message while it
// arrived, or decoded now from the small string value raw, with spec
// applied either way (a file may have arrived before its descriptor was
// known: its arguments came before the tool's name, or a retry came
// without its requestState). bad, when not "", says why there is no file
// (absent, not a string), naming it.
func (fs *Files) Value(path, name string, raw json.RawMessage, spec FileSpec) (f *File, bad string) {
	f, bad = fs.value(path, name, raw, spec)
	if f != nil && f.Problem == "" && !f.raw && !spec.AllowsInline() {
		f.Reject(InlineRefused)
	}
	return f, bad
}

func (fs *Files) value(path, name string, raw json.RawMessage, spec FileSpec) (f *File, bad string) {
	if f := fs.Get(path); f != nil {
		if f.raw {
			return &File{Name: name, Size: f.Size, Problem: schemeProblem(f.Head), raw: true, diverted: true}, ""
		}
		f.check(spec)
		return f, ""
	}
	if raw == nil || string(raw) == "null" {
		return nil, fmt.Sprintf("Argument %q is required", name)
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return nil, fmt.Sprintf("Argument %q must be a string", name)
	}
	return inline(name, spec, v), ""
}
