package fileargs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/codec"
)

// Spec is an upstream tool argument's x-mcp-file descriptor, the part the
// gateway checks.
type Spec struct {
	Accept  []string `json:"accept,omitempty"`
	MaxSize int64    `json:"maxSize,omitempty"`
	// Delivery is DeliveryReference when the upstream takes the file by
	// reference (reference.go); any other value is inline.
	Delivery string `json:"delivery,omitempty"`
	// TransferModes are the upstream's own (modes.go): with "upload" it
	// takes file URIs itself, and the gateway does not expand them.
	TransferModes []string `json:"transferModes,omitempty"`
}

// Refusal is a file argument refused: the gateway answers the client
// -32602 naming Arg, and the upstream never gets the whole request.
type Refusal struct {
	Arg     string
	Problem string
	Limit   int64 // the maxSize broken, 0 for another problem
	// Reason is the data.reason of a file URI refused (expand.go), ""
	// for a data URI.
	Reason string
	// Failed is set when the gateway failed, not the file: storing a file
	// delivered by reference broke (the caller answers -32603); Cause is
	// the store's error, for the log.
	Failed bool
	Cause  error
}

func (e *Refusal) Error() string { return fmt.Sprintf("Argument %q: %s", e.Arg, e.Problem) }

// errUnchecked ends the check of a value that is not a readable data URI:
// the upstream judges it.
var errUnchecked = errors.New("fileargs: file argument not checked")

// fileCheck checks one file argument at a time while it streams: the
// string goes through a pipe to core/codec's streaming data URI decoder,
// whose bytes are counted and the first ones sniffed, then dropped.
type fileCheck struct {
	specs map[string]Spec // of the tool called
	arg   string
	pw    *io.PipeWriter
	done  chan *Refusal
	// store keeps the files of arguments delivered by reference; nil:
	// every file is checked and forwarded inline.
	store Store
	// opener opens the file URIs expanded into data URIs (expand.go);
	// nil: a file URI is forwarded as it is.
	opener Opener
	// ref: the file being read is delivered by reference; link is its
	// replacement once stored.
	ref  bool
	link chan string
	kept string
}

func (fc *fileCheck) begin(arg string) error {
	spec, ok := fc.specs[arg]
	if !ok {
		return errUnchecked
	}
	pr, pw := io.Pipe()
	fc.arg, fc.pw, fc.done = arg, pw, make(chan *Refusal, 1)
	fc.ref, fc.kept = fc.store != nil && spec.ByReference(), ""
	if fc.ref {
		fc.link = make(chan string, 1)
		go func() {
			link, ref := keepDataURI(pr, arg, spec, fc.store)
			fc.link <- link
			fc.done <- ref
		}()
		return nil
	}
	go func() { fc.done <- checkDataURI(pr, arg, spec) }()
	return nil
}

// holds reports whether the string being read is withheld from the
// upstream (a file delivered by reference).
func (fc *fileCheck) holds() bool { return fc.ref }

// replacement is what the upstream gets in place of the string withheld,
// once end returned nil: the stored file's link.
func (fc *fileCheck) replacement() string { return fc.kept }

// write passes decoded string bytes to the check; a refusal is the error.
func (fc *fileCheck) write(p []byte) error {
	if _, err := fc.pw.Write(p); err != nil {
		return fc.verdict()
	}
	return nil
}

// end closes the string and waits for the verdict.
func (fc *fileCheck) end() error {
	_ = fc.pw.Close()
	return fc.verdict()
}

// verdict waits for the check's end: nil for a good (or unchecked) value.
func (fc *fileCheck) verdict() error {
	if fc.done == nil {
		return nil
	}
	if fc.link != nil {
		fc.kept = <-fc.link
		fc.link = nil
	}
	v := <-fc.done
	fc.done = nil
	if v == nil {
		return nil
	}
	return v
}

// stop ends a check left midway (the upstream call ended).
func (fc *fileCheck) stop() {
	if fc.pw != nil {
		_ = fc.pw.CloseWithError(errUnchecked)
	}
}

// checkDataURI reads the data URI r yields and refuses it when it breaks
// spec. A value that is not a data URI, or whose base64 is broken, is left
// to the upstream: the rest is drained.
func checkDataURI(r *io.PipeReader, arg string, spec Spec) *Refusal {
	dr, err := codec.NewDataURIReader(r)
	if err != nil {
		_, _ = io.Copy(io.Discard, r)
		return nil
	}
	if !codec.MatchAccept(spec.Accept, dr.Header.MediaType) {
		ref := &Refusal{Arg: arg, Problem: fmt.Sprintf("media type %q is not accepted (accept: %s)",
			dr.Header.MediaType, strings.Join(spec.Accept, ", "))}
		r.CloseWithError(ref)
		return ref
	}
	c := &fileCounter{arg: arg, spec: spec}
	_, err = dr.WriteTo(c)
	var ref *Refusal
	if errors.As(err, &ref) {
		r.CloseWithError(ref)
		return ref
	}
	if err == nil {
		if ref := c.sniff(); ref != nil {
			r.CloseWithError(ref)
			return ref
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return nil
}

// fileCounter counts a file's decoded bytes against its maxSize and sniffs
// its first sniffLen bytes; it keeps nothing else.
type fileCounter struct {
	arg     string
	spec    Spec
	n       int64
	head    [sniffLen]byte
	sniffed bool
}

// sniffLen is how many leading bytes are sniffed (http.DetectContentType's).
const sniffLen = 512

func (c *fileCounter) Write(p []byte) (int, error) {
	if c.n < sniffLen {
		copy(c.head[c.n:], p)
	}
	c.n += int64(len(p))
	if c.spec.MaxSize > 0 && c.n > c.spec.MaxSize {
		return 0, &Refusal{Arg: c.arg, Problem: fmt.Sprintf("file is larger than maxSize %d bytes", c.spec.MaxSize),
			Limit: c.spec.MaxSize}
	}
	if c.n >= sniffLen && !c.sniffed {
		if ref := c.sniff(); ref != nil {
			return 0, ref
		}
	}
	return len(p), nil
}

// sniff refuses content whose signature is a definite binary type that
// accept does not allow, whatever media type the data URI declared.
func (c *fileCounter) sniff() *Refusal {
	if c.sniffed {
		return nil
	}
	c.sniffed = true
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(c.head[:min(c.n, sniffLen)]))
	if !definiteType(mt) || codec.MatchAccept(c.spec.Accept, mt) {
		return nil
	}
	return &Refusal{Arg: c.arg, Problem: fmt.Sprintf("content is %s, which is not accepted (accept: %s)",
		mt, strings.Join(c.spec.Accept, ", "))}
}

// definiteType reports a sniffed media type that names a binary format by
// its signature (text and unknown bytes are not judged).
func definiteType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "image/") && mt != "image/svg+xml",
		strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "font/"):
		return true
	}
	switch mt {
	case "application/pdf", "application/zip", "application/x-gzip", "application/x-rar-compressed",
		"application/wasm", "application/ogg", "application/vnd.ms-fontobject":
		return true
	}
	return false
}

// fileString passes a file argument's string bytes, escapes undone, to
// the check, up to and including its closing quote.
func (w *walker) fileString(p []byte) (int, error) {
	fc := w.sink
	for i := 0; i < len(p); {
		if w.uhex != nil || w.esc {
			if err := w.escape(p[i]); err != nil {
				return i, err
			}
			i++
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			return len(p), fc.write(p[i:])
		}
		if j > 0 {
			if err := fc.write(p[i : i+j]); err != nil {
				return i, err
			}
		}
		i += j
		if p[i] == '\\' {
			w.esc = true
			i++
			continue
		}
		w.st = wNextOrEnd
		return i + 1, fc.end()
	}
	return len(p), nil
}

// escape takes one byte of a JSON escape in a file string.
func (w *walker) escape(c byte) error {
	if out, done := unescape(&w.esc, &w.uhex, c); done {
		return w.sink.write(out)
	}
	return nil
}

// unescape takes the next byte c of a JSON escape, after the backslash that
// set *esc: the escape's bytes once it is complete (done), its \u digits
// gathered in *uhex meanwhile. An invalid escape is taken as its letter:
// the upstream judges the JSON.
func unescape(esc *bool, uhex *[]byte, c byte) (out []byte, done bool) {
	if *uhex != nil {
		*uhex = append(*uhex, c)
		if len(*uhex) < 4 {
			return nil, false
		}
		var r rune
		for _, h := range *uhex {
			r = r<<4 | rune(unhexDigit(h))
		}
		*uhex = nil
		return utf8.AppendRune(nil, r), true
	}
	*esc = false
	switch c {
	case 'u':
		*uhex = make([]byte, 0, 4)
		return nil, false
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	}
	return []byte{c}, true
}

func unhexDigit(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}
