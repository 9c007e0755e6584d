package blobdecode

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/mcpblob/mcpblob/core/codec"
)

// Value is an embedded base64 value Rewrite offloads, as known when it
// passes the threshold: the members of its content item that came before
// it.
type Value struct {
	// Path is the value's JSON path: "/result/content/2/data",
	// "/result/content/0/resource/blob", "/result/contents/1/blob".
	Path string
	// Type is the content item's type ("image", "audio", "resource");
	// "" for an entry of contents, or when it comes after the value.
	Type     string
	MimeType string // the value's mimeType, when given before it
	URI      string // the embedded resource's or entry's uri, when given before it
}

// Offloaded is an offloaded value once its content item was read: all its
// members, and the decoded size.
type Offloaded struct {
	Value
	Size int64
}

// Link is what a Sink answers for the stored bytes: the resource_link
// that replaces the content item (Name is required by the schema).
type Link struct {
	URI, Name, Title, Description, MimeType string
	Size                                    int64
}

// Sink takes an offloaded value's decoded bytes as they arrive. Commit is
// called once the content item holding it was read (Offloaded says what
// it held) and answers with the link; Abort when the value or the message
// turns out bad (Commit is then not called).
type Sink interface {
	io.Writer
	Commit(Offloaded) (Link, error)
	Abort()
}

// SinkError is the failure of a Sink or of RewriteOptions.Open: the
// gateway's (its store's), not the upstream's; it unwraps to that error.
type SinkError struct{ Err error }

func (e *SinkError) Error() string { return "blobdecode: storing an offloaded value: " + e.Err.Error() }
func (e *SinkError) Unwrap() error { return e.Err }

// RewriteOptions say what Rewrite offloads and where to; the zero value
// of each bound is its documented default.
type RewriteOptions struct {
	// Threshold is the decoded size above which a value is offloaded:
	// 1 MiB when 0. A value whose JSON string is over twice its decoded
	// threshold (a blob spelt with \u escapes) is offloaded too, so what
	// is held while deciding stays under 2×Threshold+64 KiB raw plus
	// Threshold decoded.
	Threshold int64
	// MaxHeldBytes bounds the rest of a content item held while Rewrite
	// decides whether to replace it (64 KiB when 0); an item with more is
	// copied through as it is, its values left inline.
	MaxHeldBytes int
	// MaxStringBytes bounds an object key (16 KiB when 0); type, uri and
	// mimeType values are cut there (they are only read, the item's bytes
	// are kept as they came).
	MaxStringBytes int
	// Open returns the sink for a value that passed the threshold.
	Open func(Value) (Sink, error)
}

// Rewrite copies the JSON-RPC message msg (one message: a tools/call or
// resources/read answer) to w as it arrives, byte for byte, except for
// the content items whose base64 value is over the threshold: the data of
// result.content[] (image, audio), the blob of result.content[].resource
// (an embedded resource) and the blob of result.contents[]. Such a value
// is decoded into the sink Open returns while it arrives, and its whole
// item is replaced by a resource_link from the sink's Link (the item's
// annotations and _meta are dropped). Each content item is held until
// Rewrite knows which (up to MaxHeldBytes and the threshold); anything
// else streams through. It returns the values offloaded. After an error
// the caller must abort its response: w has a part of the message.
//
// An entry of result.contents replaced by a resource_link is not a
// ReadResourceResult entry in the schema: the caller decides whether to
// offload resources/read answers at all.
func Rewrite(msg io.Reader, w io.Writer, opts RewriteOptions) (int, error) {
	opts = rewriteDefaults(opts)
	cnt := &counter{max: 1 << 62}
	out := &output{w: w}
	rw := &rewriter{opts: opts, out: out, r: newReader(&bodyReader{r: msg, cnt: cnt}, ErrTruncated, cnt)}
	rw.r.tee = out
	err := rw.message()
	if err == nil {
		if end, e := rw.r.atEnd(); e != nil || !end {
			err = errors.Join(e, formatf("data after the message"))
		}
	}
	rw.r.flushTee()
	if err == nil {
		err = rw.r.teeErr
	}
	if rw.sink != nil {
		rw.sink.Abort()
	}
	return rw.n, err
}

func rewriteDefaults(o RewriteOptions) RewriteOptions {
	if o.Threshold <= 0 {
		o.Threshold = 1 << 20
	}
	if o.MaxHeldBytes <= 0 {
		o.MaxHeldBytes = 64 << 10
	}
	if o.MaxStringBytes <= 0 {
		o.MaxStringBytes = defaultMaxString
	}
	return o
}

// rewriter is the state of one Rewrite.
type rewriter struct {
	opts RewriteOptions
	r    *reader
	out  *output
	n    int
	hold holdWriter
	item itemState
	sink Sink // the open sink of the current item, until committed
}

// itemState is what Rewrite learnt of the content item it holds.
type itemState struct {
	Value
	diverted bool
	size     int64
}

func (rw *rewriter) message() error {
	if c, err := rw.r.skipWS(); err != nil || c != '{' {
		return errors.Join(err, formatf("the message is not an object"))
	}
	return rw.r.object(rw.opts.MaxStringBytes, func(key string) error {
		if key == "result" && rw.peek('{') {
			return rw.r.object(rw.opts.MaxStringBytes, func(key string) error {
				if (key == "content" || key == "contents") && rw.peek('[') {
					return rw.items("/result/"+key, key == "content")
				}
				return rw.r.skip(2)
			})
		}
		return rw.r.skip(1)
	})
}

// peek reports whether the next value starts with c.
func (rw *rewriter) peek(c byte) bool {
	got, err := rw.r.skipWS()
	return err == nil && got == c
}

// items reads an array of content items (tool says a tool result's).
func (rw *rewriter) items(path string, tool bool) error {
	return rw.r.array(func(i int) error {
		if !rw.peek('{') {
			return rw.r.skip(3)
		}
		return rw.content(path+"/"+strconv.Itoa(i), tool)
	})
}

// content reads one content item, held until its end, then writes it or
// its replacement.
func (rw *rewriter) content(path string, tool bool) error {
	r := rw.r
	rw.item = itemState{}
	rw.hold = holdWriter{buf: rw.hold.buf[:0], out: rw.out, max: rw.opts.MaxHeldBytes}
	r.setTee(&rw.hold)
	err := r.object(rw.opts.MaxStringBytes, func(key string) error {
		switch {
		case key == "type":
			return rw.note(&rw.item.Type)
		case key == "mimeType":
			return rw.note(&rw.item.MimeType)
		case key == "uri" && !tool:
			return rw.note(&rw.item.URI)
		case key == "data" && tool, key == "blob" && !tool:
			return rw.value(path + "/" + key)
		case key == "resource" && tool && rw.peek('{'):
			return r.object(rw.opts.MaxStringBytes, func(key string) error {
				switch key {
				case "uri":
					return rw.note(&rw.item.URI)
				case "mimeType":
					return rw.note(&rw.item.MimeType)
				case "blob":
					return rw.value(path + "/resource/blob")
				}
				return r.skip(4)
			})
		}
		return r.skip(3)
	})
	r.setTee(rw.out)
	if err != nil {
		return err
	}
	return rw.endItem()
}

// note reads a small string member of an item into dst (any other value
// is skipped); its bytes stay in the item as they came.
func (rw *rewriter) note(dst *string) error {
	if !rw.peek('"') {
		return rw.r.skip(4)
	}
	rw.r.lo++
	v, err := rw.r.smallString(rw.opts.MaxStringBytes, true)
	*dst = v
	return err
}

// endItem writes the item held, or its replacement.
func (rw *rewriter) endItem() error {
	if !rw.item.diverted {
		if !rw.hold.spilled {
			_, err := rw.out.Write(rw.hold.buf)
			return err
		}
		return nil
	}
	sink := rw.sink
	rw.sink = nil
	link, err := sink.Commit(Offloaded{Value: rw.item.Value, Size: rw.item.size})
	if err != nil {
		sink.Abort()
		return &SinkError{Err: err}
	}
	rw.n++
	_, err = rw.out.Write(resourceLink(link))
	return err
}

// resourceLink is the resource_link content item for l.
func resourceLink(l Link) []byte {
	b, _ := json.Marshal(struct {
		Type        string `json:"type"`
		URI         string `json:"uri"`
		Name        string `json:"name"`
		Title       string `json:"title,omitempty"`
		Description string `json:"description,omitempty"`
		MimeType    string `json:"mimeType,omitempty"`
		Size        int64  `json:"size,omitempty"`
	}{"resource_link", l.URI, l.Name, l.Title, l.Description, l.MimeType, l.Size})
	return b
}

// holdWriter holds a content item's bytes up to max; beyond, it gives up
// on the item: what it holds and all that follows go to out.
type holdWriter struct {
	buf     []byte
	out     io.Writer
	max     int
	spilled bool
}

func (h *holdWriter) Write(p []byte) (int, error) {
	if h.spilled {
		return h.out.Write(p)
	}
	h.buf = append(h.buf, p...)
	if len(h.buf) > h.max {
		h.spilled = true
		if _, err := h.out.Write(h.buf); err != nil {
			return 0, err
		}
		h.buf = h.buf[:0]
	}
	return len(p), nil
}

// value reads a base64 value candidate for offloading: held (raw, and
// decoded) while it is under the threshold, decoded into a sink once over.
func (rw *rewriter) value(path string) error {
	r := rw.r
	r.flushTee() // the item so far, to know whether it spilled
	if rw.opts.Open == nil || rw.hold.spilled || rw.item.diverted || !rw.peek('"') {
		return r.skip(4) // copied through
	}
	r.lo++
	c := &candidate{rw: rw, path: path, rawMax: 2*rw.opts.Threshold + 2}
	r.setTee(rawTee{c})
	sr := r.str()
	_, err := codec.NewDecoder(codec.StdEncoding, sr).(io.WriterTo).WriteTo(c)
	if bad := corruptError(err); bad != nil {
		if rw.item.diverted {
			return bad
		}
		// Not base64, but under the threshold so far: copied as it is,
		// unless it grows over (rawTee).
		c.bad = bad
		_, err = io.Copy(io.Discard, sr)
	}
	if err != nil {
		return err
	}
	rw.item.size = c.n
	r.setTee(&rw.hold)
	if rw.item.diverted {
		r.setTee(io.Discard) // the item is replaced: its other bytes are dropped
	}
	return r.teeErr
}

// corruptError is the *CorruptError for a decoder's error about its
// input, or nil.
func corruptError(err error) *CorruptError {
	var corrupt base64.CorruptInputError
	switch {
	case errors.As(err, &corrupt):
		return &CorruptError{Offset: int64(corrupt)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &CorruptError{Offset: -1}
	}
	return nil
}

// candidate is the destination of a value being read: its decoded bytes
// held up to the threshold, then its sink's.
type candidate struct {
	rw      *rewriter
	path    string
	rawMax  int64
	raw     int64  // the string's raw bytes so far
	decoded []byte // held while under the threshold
	n       int64  // decoded bytes so far
	bad     *CorruptError
}

func (c *candidate) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if !c.rw.item.diverted {
		if c.n <= c.rw.opts.Threshold {
			c.decoded = append(c.decoded, p...)
			return len(p), nil
		}
		if err := c.divert(); err != nil {
			return 0, err
		}
	}
	if _, err := c.rw.sink.Write(p); err != nil {
		return 0, &SinkError{Err: err}
	}
	return len(p), nil
}

// divert opens the sink and gives it what was held.
func (c *candidate) divert() error {
	rw := c.rw
	v := rw.item.Value
	v.Path = c.path
	sink, err := rw.opts.Open(v)
	if err != nil {
		return &SinkError{Err: err}
	}
	rw.sink, rw.item.diverted, rw.item.Path = sink, true, c.path
	if _, err := sink.Write(c.decoded); err != nil {
		return &SinkError{Err: err}
	}
	c.decoded = nil
	return nil
}

// rawTee receives the raw bytes of a candidate's string: held in the item
// while it may stay inline, dropped once diverted. A string that grows
// over twice the threshold is diverted whatever its decoded size, or, when
// it is not base64, refused.
type rawTee struct{ c *candidate }

func (t rawTee) Write(p []byte) (int, error) {
	c := t.c
	if c.rw.item.diverted {
		return len(p), nil
	}
	c.raw += int64(len(p))
	if c.raw > c.rawMax {
		if c.bad != nil {
			return 0, c.bad
		}
		if err := c.divert(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	c.rw.hold.buf = append(c.rw.hold.buf, p...)
	return len(p), nil
}
