package blobdecode

import (
	"encoding/json"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/asm"
)

const (
	// bufSize is the JSON reader's buffer (and the SSE reader's).
	bufSize = 64 << 10
	// maxDepth bounds the nesting of arrays and objects.
	maxDepth = 64
	// maxLiteral bounds a number, true, false or null.
	maxLiteral = 256
)

// reader is a buffered reader of JSON text: one message, read once, with
// nothing held but its buffer and the small strings asked for.
type reader struct {
	src    io.Reader
	buf    []byte
	lo, hi int
	err    error // sticky: the read error, io.EOF at the end
	endErr error // what an end inside a value means
	cnt    *counter
	// inPayload counts the bytes the string reader consumes as content.
	inPayload bool
	scratch   []byte // the small string being held
}

func newReader(src io.Reader, endErr error, cnt *counter) *reader {
	return &reader{src: src, buf: make([]byte, bufSize), endErr: endErr, cnt: cnt}
}

// reset starts reading src (the next SSE event's data), keeping buf.
func (r *reader) reset(src io.Reader) {
	r.src, r.lo, r.hi, r.err = src, 0, 0, nil
}

// fill reads more bytes, keeping buf[lo:hi]; false when none came.
func (r *reader) fill() bool {
	if r.err != nil {
		return false
	}
	if r.lo > 0 {
		r.hi = copy(r.buf, r.buf[r.lo:r.hi])
		r.lo = 0
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.hi:])
		r.hi += n
		if err != nil {
			r.err = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
	r.err = io.ErrNoProgress
	return false
}

// need makes n bytes available; false at the end of input.
func (r *reader) need(n int) bool {
	for r.hi-r.lo < n {
		if !r.fill() {
			return false
		}
	}
	return true
}

// readErr is the error for input that stopped inside a value.
func (r *reader) readErr() error {
	if r.err == nil || r.err == io.EOF {
		return r.endErr
	}
	return r.err
}

// advance consumes n bytes, counting them as content while in a payload.
func (r *reader) advance(n int) {
	r.lo += n
	if r.inPayload {
		r.cnt.payload += int64(n)
	}
}

func (r *reader) skipWS() (byte, error) {
	for {
		for r.lo < r.hi {
			switch c := r.buf[r.lo]; c {
			case ' ', '\t', '\r', '\n':
				r.lo++
			default:
				return c, nil
			}
		}
		if !r.fill() {
			return 0, r.readErr()
		}
	}
}

// atEnd reports whether only whitespace is left; false (with no error)
// when something else follows.
func (r *reader) atEnd() (bool, error) {
	if _, err := r.skipWS(); err != nil {
		if r.err == io.EOF {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// expect consumes c, the next byte after whitespace, or fails with why.
func (r *reader) expect(c byte, why string) error {
	got, err := r.skipWS()
	if err != nil {
		return err
	}
	if got != c {
		return formatf("%s", why)
	}
	r.lo++
	return nil
}

// object calls member for each member of the object that comes next,
// with its key; member reads the value.
func (r *reader) object(maxKey int, member func(key string) error) error {
	if err := r.expect('{', "expected an object"); err != nil {
		return err
	}
	for first := true; ; first = false {
		c, err := r.skipWS()
		if err != nil {
			return err
		}
		if c == '}' && first {
			r.lo++
			return nil
		}
		if c != '"' {
			return formatf("an object key is not a string")
		}
		r.lo++
		key, err := r.smallString(maxKey, false)
		if err != nil {
			return err
		}
		if err := r.expect(':', "missing ':' after an object key"); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if done, err := r.next('}'); done || err != nil {
			return err
		}
	}
}

// array calls elem for each element of the array that comes next.
func (r *reader) array(elem func(i int) error) error {
	if err := r.expect('[', "expected an array"); err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, err := r.skipWS()
		if err != nil {
			return err
		}
		if c == ']' && i == 0 {
			r.lo++
			return nil
		}
		if err := elem(i); err != nil {
			return err
		}
		if done, err := r.next(']'); done || err != nil {
			return err
		}
	}
}

// next reads what follows a member or an element: ',' or end.
func (r *reader) next(end byte) (done bool, err error) {
	c, err := r.skipWS()
	if err != nil {
		return false, err
	}
	r.lo++
	switch c {
	case ',':
		return false, nil
	case end:
		return true, nil
	}
	return false, formatf("missing ',' or '%c'", end)
}

// skip reads and checks one value, holding none of it.
func (r *reader) skip(depth int) error {
	if depth > maxDepth {
		return &LimitError{What: "nesting depth", Limit: maxDepth}
	}
	c, err := r.skipWS()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return r.object(1<<30, func(string) error { return r.skip(depth + 1) })
	case '[':
		return r.array(func(int) error { return r.skip(depth + 1) })
	case '"':
		r.lo++
		sr := r.str()
		_, err := io.Copy(io.Discard, sr)
		return err
	}
	_, err = r.literal()
	return err
}

// literal reads a number, true, false or null and checks it.
func (r *reader) literal() (string, error) {
	n := 0 // bytes of the literal seen, from lo
	for {
		for ; r.lo+n < r.hi; n++ {
			if c := r.buf[r.lo+n]; !(c == '-' || c == '+' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
				return r.endLiteral(n)
			}
		}
		if n > maxLiteral {
			return "", &LimitError{What: "literal", Limit: maxLiteral}
		}
		if !r.fill() { // fill keeps buf[lo:hi], so the literal stays at lo
			if r.err == io.EOF && n > 0 {
				return r.endLiteral(n)
			}
			return "", r.readErr()
		}
	}
}

// endLiteral consumes and checks the literal of n bytes at lo.
func (r *reader) endLiteral(n int) (string, error) {
	lit := r.buf[r.lo : r.lo+n]
	switch {
	case n == 0:
		return "", formatf("unexpected character %q", r.buf[r.lo])
	case n > maxLiteral:
		return "", &LimitError{What: "literal", Limit: maxLiteral}
	case !json.Valid(lit):
		return "", formatf("an invalid literal")
	}
	r.lo += n
	return string(lit), nil
}

// smallString reads the rest of a string (its opening quote consumed) of
// at most max bytes, each invalid UTF-8 byte made U+FFFD as
// encoding/json does. A longer string is a *LimitError, unless cut: then
// it is cut at max bytes and the rest read and dropped.
func (r *reader) smallString(max int, cut bool) (string, error) {
	sr := r.str()
	r.scratch = r.scratch[:0]
	var chunk [512]byte
	for {
		n, err := sr.Read(chunk[:])
		if room := max - len(r.scratch); n > room {
			if !cut {
				return "", &LimitError{What: "string", Limit: int64(max)}
			}
			r.scratch = append(r.scratch, chunk[:room]...)
			if _, err := io.Copy(io.Discard, sr); err != nil {
				return "", err
			}
			break
		}
		r.scratch = append(r.scratch, chunk[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return validString(r.scratch), nil
}

// validString is b as encoding/json decodes it: each invalid UTF-8 byte
// becomes U+FFFD.
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]rune, 0, len(b))
	for _, c := range string(b) {
		out = append(out, c)
	}
	return string(out)
}

// str returns a reader of the string whose opening quote was consumed.
func (r *reader) str() *strReader { return &strReader{r: r} }

// strReader yields the unescaped bytes of a JSON string, and io.EOF after
// its closing quote.
type strReader struct {
	r    *reader
	pend [utf8.UTFMax]byte // UTF-8 of an escape, not yet returned
	ip   int
	np   int
	done bool
	err  error
}

func (s *strReader) Read(p []byte) (int, error) {
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
		k, stop := s.step(p[n:], n > 0)
		n += k
		if stop {
			break
		}
	}
	switch {
	case n > 0:
		return n, nil
	case s.err != nil:
		return 0, s.err
	}
	return 0, io.EOF
}

// step copies plain bytes up to the next quote, backslash or control byte
// into p and handles what it finds there; stop asks Read to return what
// it has rather than wait for more input.
func (s *strReader) step(p []byte, have bool) (n int, stop bool) {
	r := s.r
	if r.lo == r.hi {
		if have {
			return 0, true
		}
		if !r.fill() {
			s.err = r.readErr()
			return 0, true
		}
	}
	data := r.buf[r.lo:r.hi]
	if len(data) > len(p) {
		data = data[:len(p)]
	}
	i := asm.IndexJSONSpecial(data)
	if i < 0 {
		r.advance(len(data))
		return copy(p, data), false
	}
	n = copy(p, data[:i])
	r.advance(i)
	switch c := r.buf[r.lo]; c {
	case '"':
		r.advance(1)
		s.done = true
	case '\\':
		s.err = s.escape()
	default:
		s.err = formatf("a control character in a string")
	}
	return n, false
}

// escape decodes the escape at buf[lo] into pend.
func (s *strReader) escape() error {
	r := s.r
	if !r.need(2) {
		return r.readErr()
	}
	s.ip, s.np = 0, 1
	switch c := r.buf[r.lo+1]; c {
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
		return s.unicodeEscape()
	default:
		return formatf("a bad escape in a string")
	}
	r.advance(2)
	return nil
}

// unicodeEscape decodes \uXXXX, joining a surrogate pair when one follows;
// a lone surrogate is U+FFFD, as encoding/json has it.
func (s *strReader) unicodeEscape() error {
	r := s.r
	if !r.need(6) {
		return r.readErr()
	}
	r1, ok := hex4(r.buf[r.lo+2 : r.lo+6])
	if !ok {
		return formatf(`a bad \u escape in a string`)
	}
	c, adv := rune(r1), 6
	if utf16.IsSurrogate(c) {
		c = utf8.RuneError
		if r.need(12) && r.buf[r.lo+6] == '\\' && r.buf[r.lo+7] == 'u' {
			if r2, ok := hex4(r.buf[r.lo+8 : r.lo+12]); ok {
				if d := utf16.DecodeRune(rune(r1), rune(r2)); d != utf8.RuneError {
					c, adv = d, 12
				}
			}
		}
	}
	s.np = utf8.EncodeRune(s.pend[:], c)
	r.advance(adv)
	return nil
}

func hex4(h []byte) (uint16, bool) {
	var v uint16
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}
