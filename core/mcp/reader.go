package mcp

// Streaming request reading (DESIGN.md data flow 3). A POSTed message is
// scanned, not unmarshalled: the scanner rebuilds the message in memory
// except for its large strings, which never are held:
//
//   - a tools/call argument that the tool declares as an x-mcp-file, when
//     the tool can name the storage key before the value arrives (upload_file
//     with its "key" argument first), is decoded while it arrives straight
//     into storage.Create (a [fileArg] holding the open storage.Writer);
//   - any other string in params or result that starts with "data:" and
//     outgrows [spoolThreshold] is decoded while it arrives into an unlinked
//     temporary file (a decoded spool), bounded by the argument's maxSize
//     when known, else by Options.MaxFileBytes;
//   - any other string that outgrows spoolThreshold goes, still escaped-free,
//     to an unlinked temporary file (a raw spool) and counts against
//     Options.MaxBodyBytes like the held bytes do.
//
// This works whatever the key order of the message: when params arrive
// before method, or arguments before name, nothing is known about the tool
// yet and data URIs take the decoded-spool path. The rebuilt message carries
// "" in place of each diverted string; the handler finds the [fileArg] by its
// JSON path ("/params/arguments/file", "/result/content/file"…).
//
// Data URI errors (bad scheme, bad base64, too large…) do not fail the
// message: they are recorded in the fileArg, the rest of the string is read
// and discarded (up to drainLimit), and the tool answers with an isError
// result naming the argument and the constraint.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/asm"
)

const (
	// scanChunk is the scanner's read buffer.
	scanChunk = 256 << 10
	// spoolThreshold: strings longer than this are spooled, not held.
	spoolThreshold = 64 << 10
	// maxDepth bounds JSON nesting.
	maxDepth = 64
	// drainLimit bounds the bytes of a rejected data URI read and discarded
	// so the rest of the message can still be parsed. Beyond it the request
	// is answered at once and the connection closed.
	drainLimit = 16 << 20
)

// errTooLarge reports held bytes beyond Options.MaxBodyBytes.
var errTooLarge = errors.New("mcp: request body too large")

// errBadJSON reports malformed JSON found by the scanner.
type errBadJSON struct{ why string }

func (e *errBadJSON) Error() string { return "mcp: invalid JSON: " + e.why }

// errAbort reports a rejected data URI too long to drain; the message was
// not read to its end.
type errAbort struct {
	fa *fileArg
	id json.RawMessage // the message's id when it came first
}

func (e *errAbort) Error() string { return "mcp: request abandoned: " + e.fa.problem }

// byteScanner is a buffered reader over the request body.
var scanBufPool = sync.Pool{New: func() any { b := make([]byte, scanChunk); return &b }}

type byteScanner struct {
	r      io.Reader
	buf    []byte
	lo, hi int
	err    error // sticky read error (io.EOF at the end)
}

// fill reads more bytes, keeping buf[lo:hi]; it returns false when none came.
func (b *byteScanner) fill() bool {
	if b.err != nil {
		return false
	}
	if b.lo > 0 {
		b.hi = copy(b.buf, b.buf[b.lo:b.hi])
		b.lo = 0
	}
	for range 100 {
		n, err := b.r.Read(b.buf[b.hi:])
		b.hi += n
		if err != nil {
			b.err = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
	b.err = io.ErrNoProgress
	return false
}

// need makes at least n bytes available; false at the end of input.
func (b *byteScanner) need(n int) bool {
	for b.hi-b.lo < n {
		if !b.fill() {
			return false
		}
	}
	return true
}

// readErr is the error for input that ended too early.
func (b *byteScanner) readErr() error {
	if b.err == nil || b.err == io.EOF {
		return &errBadJSON{"unexpected end of input"}
	}
	return b.err
}

func (b *byteScanner) skipWS() (byte, error) {
	for {
		for b.lo < b.hi {
			switch c := b.buf[b.lo]; c {
			case ' ', '\t', '\r', '\n':
				b.lo++
			default:
				return c, nil
			}
		}
		if !b.fill() {
			return 0, b.readErr()
		}
	}
}

// stringReader yields the unescaped bytes of a JSON string whose opening
// quote has been consumed, and io.EOF after its closing quote.
type stringReader struct {
	b    *byteScanner
	pend [8]byte // UTF-8 of an escape, not yet returned
	np   int
	ip   int
	done bool
	err  error
	n    int64 // unescaped bytes returned
}

func (s *stringReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if s.ip < s.np {
			k := copy(p[n:], s.pend[s.ip:s.np])
			s.ip += k
			n += k
			continue
		}
		if s.done || s.err != nil {
			break
		}
		b := s.b
		if b.lo == b.hi {
			if n > 0 {
				break // return what we have before blocking
			}
			if !b.fill() {
				s.err = b.readErr()
				break
			}
		}
		data := b.buf[b.lo:b.hi]
		if len(data) > len(p)-n {
			data = data[:len(p)-n]
		}
		i := asm.IndexJSONSpecial(data)
		if i < 0 {
			n += copy(p[n:], data)
			b.lo += len(data)
			continue
		}
		n += copy(p[n:], data[:i])
		b.lo += i
		switch c := b.buf[b.lo]; {
		case c == '"':
			b.lo++
			s.done = true
		case c == '\\':
			if err := s.escape(); err != nil {
				s.err = err
			}
		default:
			s.err = &errBadJSON{"control character in string"}
		}
	}
	s.n += int64(n)
	if n > 0 {
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	return 0, io.EOF
}

// escape decodes the escape at b.buf[b.lo] into pend.
func (s *stringReader) escape() error {
	b := s.b
	if !b.need(2) {
		return b.readErr()
	}
	c := b.buf[b.lo+1]
	s.ip, s.np = 0, 1
	switch c {
	case '"', '\\', '/':
		s.pend[0] = c
	case 'b':
		s.pend[0] = '\b'
	case 'f':
		s.pend[0] = '\f'
	case 'n':
		s.pend[0] = '\n'
	case 'r':
		s.pend[0] = '\r'
	case 't':
		s.pend[0] = '\t'
	case 'u':
		if !b.need(6) {
			return b.readErr()
		}
		r1, ok := hex4(b.buf[b.lo+2 : b.lo+6])
		if !ok {
			return &errBadJSON{`bad \u escape`}
		}
		r := rune(r1)
		adv := 6
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
			if b.need(12) && b.buf[b.lo+6] == '\\' && b.buf[b.lo+7] == 'u' {
				if r2, ok := hex4(b.buf[b.lo+8 : b.lo+12]); ok {
					if d := utf16.DecodeRune(rune(r1), rune(r2)); d != utf8.RuneError {
						r, adv = d, 12
					}
				}
			}
		}
		s.np = utf8.EncodeRune(s.pend[:], r)
		b.lo += adv
		return nil
	default:
		return &errBadJSON{"bad escape in string"}
	}
	b.lo += 2
	return nil
}

func hex4(h []byte) (uint16, bool) {
	var v uint16
	for _, c := range h {
		d, ok := unhex(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}

// drain discards the rest of the string, at most limit bytes; false when
// the string is longer.
func (s *stringReader) drain(limit int64) (bool, error) {
	n, err := io.Copy(io.Discard, io.LimitReader(s, limit))
	if err != nil {
		return false, err
	}
	if n < limit {
		return true, nil
	}
	var one [1]byte
	m, err := s.Read(one[:])
	if err == io.EOF && m == 0 {
		return true, nil
	}
	return false, err
}

// requestScanner rebuilds one message from the body stream.
type requestScanner struct {
	srv   *Server
	b     byteScanner
	out   []byte // the rebuilt message
	limit int64  // MaxBodyBytes for out plus raw spools
	spent int64  // bytes of raw spools
	files *fileSet

	method   string
	toolName string
	args     map[string]string // small string arguments seen so far
	id       []byte
	// expect returns the x-mcp-file fields of the elicitation a response
	// with this id answers (2025-11-25 form mode), or nil.
	expect func(id []byte) map[string]fileSpec
	// state is params.requestState when it came before inputResponses;
	// stateSpec reads the x-mcp-file fields of the form it asked for
	// (2026-07-28), or nil.
	state     string
	stateSpec func(method, name, state string) map[string]fileSpec
	// small is reused for every string held in memory (each is copied out
	// before the next is read).
	small bytes.Buffer
}

// readMessage scans the body r. It returns the message rebuilt without its
// large strings and the files diverted from it (never nil; release it).
// Errors: errTooLarge, *errBadJSON, *errAbort, or the body's read error.
func (s *Server) readMessage(r io.Reader, expect func(id []byte) map[string]fileSpec,
	stateSpec func(method, name, state string) map[string]fileSpec) ([]byte, *fileSet, error) {
	// The scan buffer is pooled: a fresh 256 KiB per message made small
	// requests allocation-bound (hundreds of GC cycles per thousand reads).
	// Nothing holds on to it after readMessage: diverted strings are copied
	// out (AsyncWriter, spool files) before it returns.
	bufp := scanBufPool.Get().(*[]byte)
	defer scanBufPool.Put(bufp)
	rs := &requestScanner{
		srv:       s,
		expect:    expect,
		stateSpec: stateSpec,
		b:         byteScanner{r: r, buf: *bufp},
		limit:     s.opts.MaxBodyBytes,
		files:     &fileSet{srv: s, budget: s.opts.MaxFileBytes},
		args:      map[string]string{},
	}
	if r == nil {
		return nil, rs.files, nil
	}
	err := rs.top()
	return rs.out, rs.files, err
}

func (rs *requestScanner) grow(n int) error {
	if int64(len(rs.out)+n)+rs.spent > rs.limit {
		return errTooLarge
	}
	return nil
}

func (rs *requestScanner) top() error {
	c, err := rs.b.skipWS()
	if err != nil {
		if err == io.EOF || errors.Is(err, io.EOF) {
			return nil
		}
		var bad *errBadJSON
		if errors.As(err, &bad) {
			return nil // empty body: parseMessage reports it
		}
		return err
	}
	if c != '{' {
		// Not an object (a batch, a scalar): hold it as it is, bounded,
		// and let parseMessage say what is wrong.
		for {
			if err := rs.grow(rs.b.hi - rs.b.lo); err != nil {
				return err
			}
			rs.out = append(rs.out, rs.b.buf[rs.b.lo:rs.b.hi]...)
			rs.b.lo = rs.b.hi
			if !rs.b.fill() {
				if rs.b.err == io.EOF {
					return nil
				}
				return rs.b.err
			}
		}
	}
	if err := rs.value("", 0); err != nil {
		return err
	}
	// Only whitespace may follow.
	if _, err := rs.b.skipWS(); err == nil {
		return &errBadJSON{"data after the message"}
	} else if rs.b.err != io.EOF {
		return err
	}
	return nil
}

func (rs *requestScanner) value(path string, depth int) error {
	if depth > maxDepth {
		return &errBadJSON{"nesting too deep"}
	}
	c, err := rs.b.skipWS()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		rs.b.lo++
		rs.out = append(rs.out, '{')
		first := true
		for {
			c, err := rs.b.skipWS()
			if err != nil {
				return err
			}
			if c == '}' && first {
				rs.b.lo++
				rs.out = append(rs.out, '}')
				return nil
			}
			if c != '"' {
				return &errBadJSON{"object key must be a string"}
			}
			rs.b.lo++
			key, err := rs.smallString()
			if err != nil {
				return err
			}
			if err := rs.grow(len(key) + 3); err != nil {
				return err
			}
			rs.out = append(rs.out, '"')
			rs.out = appendEscaped(rs.out, []byte(key))
			rs.out = append(rs.out, '"', ':')
			if c, err = rs.b.skipWS(); err != nil {
				return err
			} else if c != ':' {
				return &errBadJSON{"missing ':' after an object key"}
			}
			rs.b.lo++
			if err := rs.value(path+"/"+key, depth+1); err != nil {
				return err
			}
			if c, err = rs.b.skipWS(); err != nil {
				return err
			}
			rs.b.lo++
			switch c {
			case ',':
				rs.out = append(rs.out, ',')
				first = false
			case '}':
				rs.out = append(rs.out, '}')
				return nil
			default:
				return &errBadJSON{"missing ',' or '}' in an object"}
			}
		}
	case '[':
		rs.b.lo++
		rs.out = append(rs.out, '[')
		for i := 0; ; i++ {
			c, err := rs.b.skipWS()
			if err != nil {
				return err
			}
			if c == ']' && i == 0 {
				rs.b.lo++
				rs.out = append(rs.out, ']')
				return nil
			}
			if err := rs.value(path+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
			if c, err = rs.b.skipWS(); err != nil {
				return err
			}
			rs.b.lo++
			switch c {
			case ',':
				rs.out = append(rs.out, ',')
			case ']':
				rs.out = append(rs.out, ']')
				return nil
			default:
				return &errBadJSON{"missing ',' or ']' in an array"}
			}
		}
	case '"':
		rs.b.lo++
		return rs.str(path)
	default:
		start := len(rs.out)
		for {
			for rs.b.lo < rs.b.hi {
				c := rs.b.buf[rs.b.lo]
				if !(c == '-' || c == '+' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
					if len(rs.out) == start {
						return &errBadJSON{fmt.Sprintf("unexpected character %q", c)}
					}
					if path == "/id" {
						rs.id = append([]byte(nil), rs.out[start:]...)
					}
					return nil
				}
				if err := rs.grow(1); err != nil {
					return err
				}
				rs.out = append(rs.out, c)
				rs.b.lo++
			}
			if !rs.b.fill() {
				if rs.b.err == io.EOF && len(rs.out) > start {
					return nil
				}
				return rs.b.readErr()
			}
		}
	}
}

// smallString reads a string that must stay small (object keys).
func (rs *requestScanner) smallString() (string, error) {
	sr := &stringReader{b: &rs.b}
	// bytes.Buffer reads in place (io.ReaderFrom); io.Copy into a
	// strings.Builder would allocate a 32 KiB copy buffer per key.
	sb := &rs.small
	sb.Reset()
	if _, err := sb.ReadFrom(io.LimitReader(sr, spoolThreshold+1)); err != nil {
		return "", err
	}
	if sb.Len() > spoolThreshold {
		return "", errTooLarge
	}
	return sb.String(), nil
}

// str reads a string value at path.
func (rs *requestScanner) str(path string) error {
	sr := &stringReader{b: &rs.b}
	if spec, key, ok := rs.directTarget(path); ok {
		fa, err := rs.files.decode(path, spec, key, rs.args["filename"], sr)
		if err != nil {
			return err
		}
		rs.out = append(rs.out, `""`...)
		return rs.finishDiverted(fa, sr)
	}
	// Hold up to spoolThreshold bytes; a longer string is diverted.
	held := &rs.small
	held.Reset()
	if _, err := held.ReadFrom(io.LimitReader(sr, spoolThreshold+1)); err != nil {
		return err
	}
	if held.Len() <= spoolThreshold {
		if err := rs.grow(held.Len() + 2); err != nil {
			return err
		}
		v := held.Bytes()
		rs.note(path, v)
		rs.out = append(rs.out, '"')
		rs.out = appendEscaped(rs.out, v)
		rs.out = append(rs.out, '"')
		return nil
	}
	rs.out = append(rs.out, `""`...)
	src := io.MultiReader(bytes.NewReader(held.Bytes()), sr)
	if len(held.Bytes()) >= 5 && strings.EqualFold(string(held.Bytes()[:5]), "data:") {
		spec := rs.specFor(path)
		fa, err := rs.files.decode(path, spec, "", "", src)
		if err != nil {
			return err
		}
		return rs.finishDiverted(fa, sr)
	}
	fa, err := rs.files.rawSpool(path, src, rs.limit-int64(len(rs.out))-rs.spent)
	if err != nil {
		return err
	}
	rs.spent += fa.size
	return nil
}

// finishDiverted reads what is left of a diverted string after a data URI
// error, or abandons the message when too much is left.
func (rs *requestScanner) finishDiverted(fa *fileArg, sr *stringReader) error {
	if sr.done {
		return nil
	}
	ok, err := sr.drain(drainLimit)
	if err != nil {
		return err
	}
	if !ok {
		return &errAbort{fa: fa, id: rs.id}
	}
	return nil
}

// note remembers the small strings the scanner needs to route later ones.
func (rs *requestScanner) note(path string, v []byte) {
	switch {
	case path == "/method":
		rs.method = string(v)
	case path == "/id":
		rs.id = jsonString(string(v))
	case path == "/params/name":
		rs.toolName = string(v)
	case path == "/params/requestState":
		rs.state = string(v)
	case strings.HasPrefix(path, "/params/arguments/") && !strings.Contains(path[len("/params/arguments/"):], "/"):
		rs.args[path[len("/params/arguments/"):]] = string(v)
	}
}

// tool returns the tool of a tools/call whose method and name came first.
func (rs *requestScanner) tool() *tool {
	if rs.method != "tools/call" || rs.toolName == "" {
		return nil
	}
	return rs.srv.toolMap[rs.toolName]
}

// specFor returns the x-mcp-file descriptor of the argument at path, when
// known, else the server-wide default.
func (rs *requestScanner) specFor(path string) fileSpec {
	if field, ok := strings.CutPrefix(path, "/result/content/"); ok && rs.expect != nil && rs.id != nil {
		if spec, ok := rs.expect(rs.id)[field]; ok {
			return spec
		}
	}
	if rest, ok := strings.CutPrefix(path, "/params/inputResponses/"); ok && rs.state != "" && rs.stateSpec != nil {
		if _, field, ok := strings.Cut(rest, "/content/"); ok {
			if spec, ok := rs.stateSpec(rs.method, rs.toolName, rs.state)[field]; ok {
				return spec
			}
		}
	}
	if t := rs.tool(); t != nil && t.files != nil {
		if arg, ok := strings.CutPrefix(path, "/params/arguments/"); ok {
			if spec, ok := t.files[arg]; ok {
				return spec
			}
		}
	}
	return fileSpec{MaxSize: rs.srv.opts.MaxFileBytes}
}

// directTarget reports whether the string at path can go straight to
// storage, and under which key.
func (rs *requestScanner) directTarget(path string) (fileSpec, string, bool) {
	t := rs.tool()
	if t == nil || t.files == nil || t.directKey == nil {
		return fileSpec{}, "", false
	}
	arg, ok := strings.CutPrefix(path, "/params/arguments/")
	if !ok {
		return fileSpec{}, "", false
	}
	spec, ok := t.files[arg]
	if !ok {
		return fileSpec{}, "", false
	}
	key, ok := t.directKey(rs.args)
	return spec, key, ok
}
