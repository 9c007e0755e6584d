package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/storage"
)

// fileSpec is an x-mcp-file descriptor (SPEC.md §7.1).
type fileSpec struct {
	Accept  []string `json:"accept,omitempty"`
	MaxSize int64    `json:"maxSize,omitempty"`
}

// sniffLen is how many leading payload bytes are kept for content sniffing.
const sniffLen = 512

// errFileTooLarge stops a decode at the argument's maxSize.
var errFileTooLarge = errors.New("mcp: file too large")

// fileArg is a data URI (or other large string) taken out of a message
// while it arrived. Exactly one of w (decoded straight into storage under
// key), spool (decoded payload, or the raw string when raw) is set, unless
// the value was rejected early.
type fileArg struct {
	name    string // the argument or field name (last path element)
	header  codec.DataURIHeader
	size    int64 // payload bytes (raw: string bytes)
	head    []byte
	problem string // why the value is rejected, "" when fine so far

	w      storage.Writer
	key    string
	spool  *os.File
	raw    bool
	inline []byte // a small data URI decoded from an ordinary string
}

// release discards what the fileArg holds (Abort is a no-op after Commit).
func (fa *fileArg) release() {
	if fa.w != nil {
		_ = fa.w.Abort(context.Background())
	}
	if fa.spool != nil {
		_ = fa.spool.Close()
	}
}

// fileSet is the set of fileArgs of one message, by JSON path.
type fileSet struct {
	srv    *Server
	budget int64 // decoded bytes left for the whole message
	mu     sync.Mutex
	m      map[string]*fileArg
	kept   bool
}

func (fs *fileSet) get(path string) *fileArg {
	if fs == nil {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.m[path]
}

func (fs *fileSet) put(path string, fa *fileArg) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = map[string]*fileArg{}
	}
	if old := fs.m[path]; old != nil {
		old.release() // a duplicate key: the last one wins, as in encoding/json
	}
	fs.m[path] = fa
}

// keep hands the set to another owner (a waiting tool); release then does
// nothing and the owner calls discard.
func (fs *fileSet) keep() {
	if fs != nil {
		fs.mu.Lock()
		fs.kept = true
		fs.mu.Unlock()
	}
}

// release discards every fileArg unless the set was handed over.
func (fs *fileSet) release() {
	if fs == nil {
		return
	}
	fs.mu.Lock()
	kept := fs.kept
	fs.mu.Unlock()
	if !kept {
		fs.discard()
	}
}

func (fs *fileSet) discard() {
	if fs == nil {
		return
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, fa := range fs.m {
		fa.release()
	}
	fs.m = nil
}

func lastElem(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// tempFile returns an unlinked temporary file: it disappears when closed,
// whatever happens to the process.
func (s *Server) tempFile() (*os.File, error) {
	f, err := os.CreateTemp(s.opts.SpoolDir, "mcpblob-spool-*")
	if err != nil {
		return nil, fmt.Errorf("mcp: spool: %w", err)
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// headSink counts, bounds and keeps the first bytes of what passes to w.
type headSink struct {
	w    io.Writer
	max  int64
	n    int64
	head []byte
}

func (h *headSink) Write(p []byte) (int, error) {
	if h.max > 0 && h.n+int64(len(p)) > h.max {
		return 0, errFileTooLarge
	}
	if len(h.head) < sniffLen {
		h.head = append(h.head, p[:min(len(p), sniffLen-len(h.head))]...)
	}
	n, err := h.w.Write(p)
	h.n += int64(n)
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

// decodeDataURI decodes the data URI that src yields, checking the scheme,
// the header, accept and maxSize as bytes arrive. Once the header passed,
// open returns the writer the payload goes to. Problems with the value are
// returned in fa.problem (the rest of src is then left unread); err is an
// error of src, or of open.
func decodeDataURI(name string, spec fileSpec, src io.Reader, open func(codec.DataURIHeader) (io.Writer, error), budget int64) (fa *fileArg, err error) {
	fa = &fileArg{name: name}
	tee := &headTee{r: src}
	dr, err := codec.NewDataURIReader(tee)
	if err != nil {
		var de *codec.DataURIError
		if !errors.As(err, &de) {
			return nil, err
		}
		if errors.Is(err, codec.ErrNotDataURI) {
			fa.problem = schemeProblem(tee.head)
		} else {
			fa.problem = "malformed data URI: " + de.Reason
		}
		return fa, nil
	}
	fa.header = dr.Header
	if len(spec.Accept) > 0 && !codec.MatchAccept(spec.Accept, dr.Header.MediaType) {
		fa.problem = acceptProblem(dr.Header.MediaType, spec.Accept)
		return fa, nil
	}
	limit := spec.MaxSize
	if budget > 0 && (limit <= 0 || budget < limit) {
		limit = budget
	}
	dst, err := open(dr.Header)
	if err != nil {
		return nil, err
	}
	sink := &headSink{w: dst, max: limit}
	_, err = dr.WriteTo(sink)
	fa.size, fa.head = sink.n, sink.head
	var de *codec.DataURIError
	switch {
	case err == nil:
	case errors.Is(err, errFileTooLarge), errors.Is(err, storage.ErrTooLarge):
		if spec.MaxSize > 0 && limit == spec.MaxSize {
			fa.problem = fmt.Sprintf("file is larger than maxSize %d bytes", spec.MaxSize)
		} else {
			fa.problem = fmt.Sprintf("file is larger than the server's limit of %d bytes", limit)
		}
	case errors.As(err, &de):
		fa.problem = "malformed data URI: " + de.Reason
	default:
		return nil, err
	}
	return fa, nil
}

// storedType is the media type stored for a data URI header: type/subtype,
// plus the charset of text.
func storedType(h codec.DataURIHeader) string {
	mt := h.MediaType
	if cs, ok := h.Param("charset"); ok && strings.HasPrefix(mt, "text/") {
		mt += "; charset=" + strings.ToLower(cs)
	}
	return mt
}

func schemeProblem(head []byte) string {
	if sch := schemeOf(head); sch != "" {
		return fmt.Sprintf("scheme %q is not supported: a data: URI is required", sch)
	}
	return "not a URI: a data: URI is required"
}

func acceptProblem(mt string, accept []string) string {
	return fmt.Sprintf("media type %q is not accepted (accept: %s)", mt, strings.Join(accept, ", "))
}

// decode takes a data URI out of the message: into storage under key
// (with filename) when key is set, else into a decoded spool.
func (fs *fileSet) decode(path string, spec fileSpec, key, filename string, src io.Reader) (*fileArg, error) {
	s := fs.srv
	var (
		w     storage.Writer
		spool *os.File
	)
	var aw *AsyncWriter
	open := func(h codec.DataURIHeader) (io.Writer, error) {
		var err error
		if key != "" {
			w, err = s.backend.Create(s.baseCtx, key, storage.CreateOptions{MediaType: storedType(h), Filename: filename, MaxSize: spec.MaxSize})
			if err != nil {
				return nil, fmt.Errorf("mcp: create %q: %w", key, err)
			}
			aw = NewAsyncWriter(w)
			return aw, nil
		}
		if spool, err = s.tempFile(); err != nil {
			return nil, err
		}
		aw = NewAsyncWriter(spool)
		return aw, nil
	}
	fa, err := decodeDataURI(lastElem(path), spec, src, open, fs.budget)
	if aw != nil {
		if cerr := aw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("mcp: store: %w", cerr)
		}
	}
	if err != nil || fa.problem != "" {
		if w != nil {
			_ = w.Abort(context.Background())
		}
		if spool != nil {
			spool.Close()
		}
		if err != nil {
			return nil, err
		}
		fs.put(path, fa)
		return fa, nil
	}
	fs.budget -= fa.size
	fa.w, fa.key, fa.spool = w, key, spool
	if spool != nil {
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			spool.Close()
			return nil, fmt.Errorf("mcp: spool: %w", err)
		}
	}
	fs.put(path, fa)
	return fa, nil
}

// rawSpool takes any other long string out of the message, up to limit bytes.
func (fs *fileSet) rawSpool(path string, src io.Reader, limit int64) (*fileArg, error) {
	f, err := fs.srv.tempFile()
	if err != nil {
		return nil, err
	}
	sink := &headSink{w: f, max: limit}
	if _, err := io.Copy(sink, src); err != nil {
		f.Close()
		if errors.Is(err, errFileTooLarge) {
			return nil, errTooLarge
		}
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("mcp: spool: %w", err)
	}
	fa := &fileArg{name: lastElem(path), size: sink.n, head: sink.head, spool: f, raw: true}
	fs.put(path, fa)
	return fa, nil
}

// inlineFile decodes a data URI held as an ordinary (small) string value.
func inlineFile(name string, spec fileSpec, v string) *fileArg {
	var buf bytes.Buffer
	fa, err := decodeDataURI(name, spec, strings.NewReader(v), func(codec.DataURIHeader) (io.Writer, error) { return &buf, nil }, 0)
	if err != nil {
		return &fileArg{name: name, problem: "malformed data URI"}
	}
	if fa.problem == "" {
		fa.spool = nil
		fa.inline = buf.Bytes()
	}
	return fa
}

// Content sniffing (SPEC.md §7.1: the declared media type is advisory).
// Only formats with unambiguous magic numbers are listed: for them a
// declared type that the content contradicts is a lie and is rejected.
var magic = []struct {
	mt     string
	off    int
	prefix string
}{
	{"image/png", 0, "\x89PNG\r\n\x1a\n"},
	{"image/jpeg", 0, "\xff\xd8\xff"},
	{"image/gif", 0, "GIF87a"},
	{"image/gif", 0, "GIF89a"},
	{"image/webp", 8, "WEBP"},
	{"image/tiff", 0, "II*\x00"},
	{"image/tiff", 0, "MM\x00*"},
	{"application/pdf", 0, "%PDF-"},
	{"application/zip", 0, "PK\x03\x04"},
	{"application/zip", 0, "PK\x05\x06"},
	{"application/gzip", 0, "\x1f\x8b\x08"},
	{"application/x-bzip2", 0, "BZh"},
	{"application/x-xz", 0, "\xfd7zXZ\x00"},
	{"application/zstd", 0, "\x28\xb5\x2f\xfd"},
	{"application/x-7z-compressed", 0, "7z\xbc\xaf\x27\x1c"},
	{"audio/ogg", 0, "OggS"},
	{"audio/wav", 8, "WAVE"},
}

// aliases maps declared types to the canonical names above.
var aliases = map[string]string{
	"image/jpg":                    "image/jpeg",
	"image/pjpeg":                  "image/jpeg",
	"application/x-gzip":           "application/gzip",
	"application/x-zip-compressed": "application/zip",
	"application/x-pdf":            "application/pdf",
	"audio/x-wav":                  "audio/wav",
	"audio/wave":                   "audio/wav",
	"application/x-zstd":           "application/zstd",
}

// sniff returns the reliable media type of content starting with head, or "".
func sniff(head []byte) string {
	for _, m := range magic {
		if len(head) >= m.off+len(m.prefix) && string(head[m.off:m.off+len(m.prefix)]) == m.prefix {
			if m.off == 8 && string(head[:4]) != "RIFF" {
				continue
			}
			return m.mt
		}
	}
	return ""
}

func reliable(mt string) bool {
	for _, m := range magic {
		if m.mt == mt {
			return true
		}
	}
	return false
}

// contentProblem checks a decoded file: not empty, and content that does not
// contradict the declared type where sniffing is reliable. It returns the
// problem and the media type to store.
func contentProblem(declared string, size int64, head []byte) (string, string) {
	if size == 0 {
		return "file is empty", declared
	}
	d := strings.ToLower(declared)
	if a, ok := aliases[d]; ok {
		d = a
	}
	got := sniff(head)
	switch {
	case reliable(d) && got != d:
		if got == "" {
			return fmt.Sprintf("content does not match the declared media type %q", declared), declared
		}
		return fmt.Sprintf("content is %s, not the declared media type %q", got, declared), declared
	case got != "" && strings.HasPrefix(d, "text/"):
		return fmt.Sprintf("content is %s, not the declared media type %q", got, declared), declared
	case got != "" && d == storage.DefaultMediaType:
		return "", got
	}
	return "", declared
}

// SniffProblem reports content, given by its first bytes, that contradicts
// the declared media type where sniffing is reliable (PNG, JPEG, GIF, WebP,
// PDF, ZIP, gzip…); "" when there is nothing to object to.
func SniffProblem(declared string, head []byte) string {
	why, _ := contentProblem(declared, 1, head)
	return why
}

// AsyncWriter hands what is written to it to w on another goroutine, in
// chunks of asyncChunk bytes, so decoding the next bytes overlaps storage's
// hashing and writing of the last ones (2 cores: about 1.5× on a large
// upload). It holds at most asyncBufs chunks.
type AsyncWriter struct {
	w    io.Writer
	cur  []byte
	work chan []byte
	free chan []byte
	done chan struct{}
	mu   sync.Mutex
	err  error
}

const (
	asyncChunk = 1 << 20
	asyncBufs  = 3
)

// NewAsyncWriter starts the writer goroutine; Close must be called to end it.
// core/server uses it for upload endpoints too.
func NewAsyncWriter(w io.Writer) *AsyncWriter {
	a := &AsyncWriter{w: w, work: make(chan []byte, asyncBufs), free: make(chan []byte, asyncBufs), done: make(chan struct{})}
	for range asyncBufs - 1 {
		a.free <- make([]byte, 0, asyncChunk)
	}
	a.cur = make([]byte, 0, asyncChunk)
	go func() {
		defer close(a.done)
		for b := range a.work {
			if a.failed() == nil {
				if _, err := a.w.Write(b); err != nil {
					a.mu.Lock()
					a.err = err
					a.mu.Unlock()
				}
			}
			a.free <- b[:0]
		}
	}()
	return a
}

func (a *AsyncWriter) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *AsyncWriter) Write(p []byte) (int, error) {
	if err := a.failed(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		k := copy(a.cur[len(a.cur):cap(a.cur)], p)
		a.cur = a.cur[:len(a.cur)+k]
		p = p[k:]
		if len(a.cur) == cap(a.cur) {
			a.work <- a.cur
			a.cur = <-a.free
		}
	}
	return n, nil
}

// Close writes what is left and waits for the writer goroutine; it returns
// the first error of w.
func (a *AsyncWriter) Close() error {
	if len(a.cur) > 0 {
		a.work <- a.cur
		a.cur = nil
	}
	close(a.work)
	<-a.done
	return a.failed()
}
