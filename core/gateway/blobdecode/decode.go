package blobdecode

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"slices"
	"strconv"

	"github.com/mcpblob/mcpblob/core/codec"
)

// Kind is what a content carries.
type Kind int

const (
	Blob Kind = iota + 1 // base64, written decoded
	Text                 // UTF-8 text, written unescaped
)

func (k Kind) String() string {
	switch k {
	case Blob:
		return "blob"
	case Text:
		return "text"
	}
	return "none"
}

// Header describes the content as far as it is known: at Begin, the
// members that came before the blob or text; in the Result, all of them.
type Header struct {
	Kind     Kind
	URI      string // "" when not (yet) given
	MimeType string // "" when not (yet) given
}

// Result is what Decode found and wrote.
type Result struct {
	Header
	// Written counts the bytes written to the destination.
	Written int64
	// MimeTypeLate reports a mimeType that came after the blob or text
	// began: Begin did not see it.
	MimeTypeLate bool
	// More counts the entries of contents after the first, read and
	// skipped.
	More int
	// Freshness is what the answer said about caching its content.
	Freshness
}

// Options bound one answer; the zero value is the documented default.
type Options struct {
	// MaxStringBytes bounds each string held: an object key, the id, uri,
	// mimeType, jsonrpc, method (16 KiB when 0). An error message is cut
	// there instead.
	MaxStringBytes int
	// MaxLineBytes bounds each SSE line but data lines (16 KiB when 0,
	// 60 KiB at most: a line is held whole in the SSE reader's buffer).
	MaxLineBytes int
	// MaxOtherBytes bounds the body's bytes outside the content string:
	// notifications and requests before the answer, other members, other
	// entries of contents (64 MiB when 0), enforced within 128 KiB.
	MaxOtherBytes int64
	// MaxContentBytes bounds the bytes written (no bound when 0).
	MaxContentBytes int64
	// Begin, when set, is called once just before the first byte of the
	// content is written (for an empty content too), with what is known
	// of it then: set Content-Type here. Its error stops Decode with
	// nothing written (and Upstream reports false for it).
	Begin func(Header) error
}

const (
	defaultMaxString = 16 << 10
	defaultMaxLine   = 16 << 10
	defaultMaxOther  = 64 << 20
	maxLine          = bufSize - 4<<10
)

// Decode reads body, the upstream's answer to a resources/read request
// whose id is id (JSON: a string or a number), with the Content-Type
// contentType (application/json, or text/event-stream), and streams the
// first entry of its contents into w as the bytes arrive: a blob decoded
// from base64, a text as UTF-8. See the package documentation for what is
// accepted and the errors.
func Decode(body io.Reader, contentType string, id json.RawMessage, w io.Writer, opts Options) (Result, error) {
	want, err := parseID(id)
	if err != nil {
		return Result{}, err
	}
	opts = withDefaults(opts)
	cnt := &counter{max: opts.MaxOtherBytes}
	src := &bodyReader{r: body, cnt: cnt}
	d := &decoder{want: want, opts: opts, cnt: cnt, out: &output{w: w, max: opts.MaxContentBytes}}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/json":
		err = d.fromJSON(src)
	case "text/event-stream":
		err = d.fromSSE(src)
	default:
		err = formatf("Content-Type %q is neither application/json nor text/event-stream", mt)
	}
	d.res.Written = d.out.n
	return d.res, err
}

func withDefaults(o Options) Options {
	if o.MaxStringBytes <= 0 {
		o.MaxStringBytes = defaultMaxString
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = defaultMaxLine
	}
	o.MaxLineBytes = min(o.MaxLineBytes, maxLine)
	if o.MaxOtherBytes <= 0 {
		o.MaxOtherBytes = defaultMaxOther
	}
	return o
}

// decoder is the state of one Decode.
type decoder struct {
	want  idValue
	opts  Options
	cnt   *counter
	out   *output
	res   Result
	begun bool
}

// fromJSON reads an application/json body: one message, our answer.
func (d *decoder) fromJSON(src io.Reader) error {
	r := newReader(src, ErrTruncated, d.cnt)
	defer r.release()
	c, err := r.skipWS()
	switch {
	case err != nil && r.err == io.EOF:
		return formatf("the body is empty")
	case err != nil:
		return err
	case c == '[':
		return formatf("a JSON-RPC batch is not an answer to one request")
	}
	answer, err := d.message(r)
	if err != nil {
		return err
	}
	if !answer {
		return formatf("the body is a request or a notification, not an answer")
	}
	if end, err := r.atEnd(); err != nil || !end {
		return errors.Join(err, formatf("data after the answer"))
	}
	return nil
}

// fromSSE reads a text/event-stream body: events up to the one that
// answers, which must end (its blank line) for the answer to count.
func (d *decoder) fromSSE(src io.Reader) error {
	s := newSSEReader(src, d.opts.MaxLineBytes)
	defer s.release()
	r := newReader(nil, formatf("an SSE event's data ends inside its JSON"), d.cnt)
	defer r.release()
	for {
		switch err := s.next(); {
		case err == io.EOF:
			return ErrTruncated
		case err != nil:
			return err
		}
		r.reset(s)
		if end, err := r.atEnd(); err != nil {
			return err
		} else if end {
			continue // an event with no data, such as a priming event
		}
		if c, _ := r.skipWS(); c == '[' {
			return formatf("a JSON-RPC batch is not an answer to one request")
		}
		answer, err := d.message(r)
		if err != nil {
			return err
		}
		if end, err := r.atEnd(); err != nil || !end {
			return errors.Join(err, formatf("data after the message in an SSE event"))
		}
		if answer {
			return nil
		}
	}
}

// message reads one JSON-RPC message: an answer (ours, or an error), or a
// request or notification, skipped (answer false).
func (d *decoder) message(r *reader) (answer bool, err error) {
	var m msgState
	err = r.object(d.opts.MaxStringBytes, func(key string) error { return d.member(r, &m, key) })
	if err != nil {
		return false, err
	}
	if m.method {
		return false, nil
	}
	return true, d.verdict(&m)
}

// msgState is what the members of a message said so far.
type msgState struct {
	seen      [len(topMembers)]bool // the top-level members the protocol reads
	method    bool
	idGiven   bool
	idMatches bool
	gotID     string // the id as JSON, for an IDError
	jsonrpc   string
	rpcErr    *RPCError
	contents  bool // result.contents held an entry
}

// topMembers are the members of a message the protocol reads, each at
// most once.
var topMembers = [...]string{"jsonrpc", "id", "method", "result", "error"}

const resultMember, errorMember = 3, 4

// member reads the message member key.
func (d *decoder) member(r *reader, m *msgState, key string) error {
	i := slices.Index(topMembers[:], key)
	switch {
	case i < 0:
		return r.skip(1)
	case m.seen[i]:
		return formatf("member %q is given twice", key)
	}
	m.seen[i] = true
	switch key {
	case "jsonrpc":
		return d.jsonrpc(r, m)
	case "id":
		return d.id(r, m)
	case "method":
		if m.seen[resultMember] || m.seen[errorMember] {
			return formatf("a message with method and a result or error")
		}
		m.method = true
		return r.skip(1)
	}
	if m.method {
		return r.skip(1) // a request's own members
	}
	if m.seen[resultMember] && m.seen[errorMember] {
		return formatf("an answer with both result and error")
	}
	if key == "error" {
		return d.rpcError(r, m)
	}
	if m.idGiven && !m.idMatches {
		return &IDError{Got: m.gotID} // before a byte is written
	}
	return d.result(r, m)
}

func (d *decoder) jsonrpc(r *reader, m *msgState) error {
	if c, err := r.skipWS(); err != nil {
		return err
	} else if c != '"' {
		return formatf("jsonrpc is not a string")
	}
	r.lo++
	v, err := r.smallString(d.opts.MaxStringBytes, false)
	m.jsonrpc = v
	return err
}

// verdict judges an answer once all of it was read.
func (d *decoder) verdict(m *msgState) error {
	switch {
	case m.jsonrpc != "2.0":
		return formatf(`the answer's jsonrpc is not "2.0"`)
	case m.rpcErr != nil && (!m.idGiven || m.gotID == "null" || m.idMatches):
		return m.rpcErr
	case !m.idGiven:
		return &IDError{Got: "null"}
	case !m.idMatches:
		return &IDError{Got: m.gotID}
	case !m.seen[resultMember]:
		return formatf("an answer with neither result nor error")
	case !m.contents:
		return ErrNoContent
	}
	return nil
}

// result reads a ReadResourceResult, streaming its first content.
func (d *decoder) result(r *reader, m *msgState) error {
	seen := false
	return r.object(d.opts.MaxStringBytes, func(key string) error {
		if ok, err := d.resultFreshness(r, key); ok { // freshness.go
			return err
		}
		if key != "contents" {
			return r.skip(2)
		}
		if seen {
			return formatf("member %q of result is given twice", key)
		}
		seen = true
		return r.array(func(i int) error {
			if i > 0 {
				d.res.More++
				return r.skip(3)
			}
			m.contents = true
			return d.content(r)
		})
	})
}

// content reads the first entry of contents.
func (d *decoder) content(r *reader) error {
	var uri, mimeType, body bool // given
	err := r.object(d.opts.MaxStringBytes, func(key string) error {
		var given *bool
		switch key {
		case "uri":
			given = &uri
		case "mimeType":
			given = &mimeType
		case "blob", "text":
			given = &body
		default:
			if ok, err := d.contentFreshness(r, key); ok { // freshness.go
				return err
			}
			return r.skip(4)
		}
		switch {
		case *given && given == &body:
			return formatf("the content has more than one blob or text")
		case *given:
			return formatf("member %q of the content is given twice", key)
		}
		*given = true
		switch key {
		case "uri":
			return d.contentString(r, key, &d.res.URI)
		case "mimeType":
			d.res.MimeTypeLate = d.begun
			return d.contentString(r, key, &d.res.MimeType)
		case "blob":
			return d.payload(r, Blob)
		}
		return d.payload(r, Text)
	})
	if err == nil && !body {
		return ErrNoContent
	}
	return err
}

// contentString reads a small string member of the content into dst.
func (d *decoder) contentString(r *reader, key string, dst *string) error {
	if c, err := r.skipWS(); err != nil {
		return err
	} else if c != '"' {
		return formatf("the content's %s is not a string", key)
	}
	r.lo++
	v, err := r.smallString(d.opts.MaxStringBytes, false)
	*dst = v
	return err
}

// payload streams the blob or text string that comes next into the
// destination.
func (d *decoder) payload(r *reader, kind Kind) error {
	if c, err := r.skipWS(); err != nil {
		return err
	} else if c != '"' {
		return formatf("the content's %s is not a string", kind)
	}
	r.lo++
	d.res.Kind = kind
	if d.opts.Begin != nil {
		if err := d.opts.Begin(d.res.Header); err != nil {
			return &beginError{err}
		}
	}
	d.begun = true
	r.inPayload = true
	defer func() { r.inPayload = false }()
	sr := r.str()
	if kind == Text {
		u := &utf8Writer{w: d.out}
		if _, err := io.CopyBuffer(u, sr, make([]byte, 32<<10)); err != nil {
			return err
		}
		return u.Flush()
	}
	_, err := codec.NewDecoder(codec.StdEncoding, sr).(io.WriterTo).WriteTo(d.out)
	if bad := corruptError(err); bad != nil {
		return bad
	}
	return err
}

// output is the destination: it counts, bounds, and types its errors.
type output struct {
	w   io.Writer
	n   int64
	max int64
}

func (o *output) Write(p []byte) (int, error) {
	if o.max > 0 && o.n+int64(len(p)) > o.max {
		return 0, &LimitError{What: "content size", Limit: o.max}
	}
	n, err := o.w.Write(p)
	o.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return n, &WriteError{Err: err}
	}
	return n, nil
}

// rpcError reads an error object.
func (d *decoder) rpcError(r *reader, m *msgState) error {
	e := &RPCError{}
	var code, msg bool
	err := r.object(d.opts.MaxStringBytes, func(key string) error {
		switch key {
		case "code":
			lit, err := r.literal()
			if err != nil {
				return err
			}
			code = true
			if e.Code, err = strconv.ParseInt(lit, 10, 64); err != nil {
				return formatf("the error's code is not an integer")
			}
			return nil
		case "message":
			if c, err := r.skipWS(); err != nil {
				return err
			} else if c != '"' {
				return formatf("the error's message is not a string")
			}
			r.lo++
			msg = true
			var err error
			e.Message, err = r.smallString(d.opts.MaxStringBytes, true)
			return err
		}
		return r.skip(2)
	})
	if err == nil && !(code && msg) {
		err = formatf("the error has no code or no message")
	}
	m.rpcErr = e
	return err
}

// idValue is a JSON-RPC id: a string (unescaped) or a number (its
// literal).
type idValue struct {
	str bool
	v   string
}

// parseID reads the request's id.
func parseID(id json.RawMessage) (idValue, error) {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return idValue{str: true, v: s}, nil
	}
	var n json.Number
	if json.Unmarshal(id, &n) == nil && n != "" {
		return idValue{v: string(n)}, nil
	}
	return idValue{}, errors.New("blobdecode: the request id must be a JSON string or number")
}

// matches reports whether got is the same id: the same string, or the
// same number (the same literal, or integers of the same value).
func (v idValue) matches(got idValue) bool {
	if v.str != got.str || v.v == got.v {
		return v.str == got.str && v.v == got.v
	}
	if v.str {
		return false
	}
	a, err1 := strconv.ParseInt(v.v, 10, 64)
	b, err2 := strconv.ParseInt(got.v, 10, 64)
	return err1 == nil && err2 == nil && a == b
}

// id reads the message's id.
func (d *decoder) id(r *reader, m *msgState) error {
	c, err := r.skipWS()
	if err != nil {
		return err
	}
	var got idValue
	switch c {
	case '"':
		r.lo++
		s, err := r.smallString(d.opts.MaxStringBytes, false)
		if err != nil {
			return err
		}
		got = idValue{str: true, v: s}
		q, _ := json.Marshal(s)
		m.gotID = string(q)
	case '{', '[':
		return formatf("the id is not a string or a number")
	default:
		lit, err := r.literal()
		if err != nil {
			return err
		}
		if lit == "true" || lit == "false" {
			return formatf("the id is not a string or a number")
		}
		got, m.gotID = idValue{v: lit}, lit
	}
	m.idGiven = true
	m.idMatches = m.gotID != "null" && d.want.matches(got)
	return nil
}
