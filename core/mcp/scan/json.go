package scan

import (
	"errors"
	"io"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/asm"
)

// BadJSONError reports malformed JSON found by the scanner.
type BadJSONError struct{ Why string }

// ErrTooDeep means the message nests arrays and objects deeper than the
// scanner follows (64 levels): well-formed, perhaps, but refused.
var ErrTooDeep = errors.New("scan: JSON nested deeper than 64 levels")

func (e *BadJSONError) Error() string { return "scan: invalid JSON: " + e.Why }

// The scanner's buffers, pooled (a fresh buffer per message made small
// requests allocation-bound): it starts with a small one and moves to the
// large one once a single read fills the small one, so a body that arrives
// fast gets large reads while one that trickles (or is small) never holds
// the large buffer.
var (
	smallScanBufs = sync.Pool{New: func() any { b := make([]byte, scanSmall); return &b }}
	scanBufs      = sync.Pool{New: func() any { b := make([]byte, scanChunk); return &b }}
)

// byteScanner is a buffered reader over the request body.
type byteScanner struct {
	r      io.Reader
	buf    []byte
	lo, hi int
	err    error   // sticky read error (io.EOF at the end)
	small  *[]byte // from smallScanBufs
	large  *[]byte // from scanBufs, once taken
	full   bool    // the last read filled buf
}

// newByteScanner returns a scanner of r on a small pooled buffer; release
// gives its buffers back.
func newByteScanner(r io.Reader) byteScanner {
	small := smallScanBufs.Get().(*[]byte)
	return byteScanner{r: r, buf: *small, small: small}
}

// release returns the buffers to their pools; b must not be used after.
func (b *byteScanner) release() {
	if b.small != nil {
		smallScanBufs.Put(b.small)
	}
	if b.large != nil {
		scanBufs.Put(b.large)
	}
	b.buf, b.small, b.large = nil, nil, nil
}

// fill reads more bytes, keeping buf[lo:hi]; it returns false when none came.
func (b *byteScanner) fill() bool {
	if b.err != nil {
		return false
	}
	switch {
	case b.full && b.large == nil:
		b.large = scanBufs.Get().(*[]byte)
		b.hi = copy(*b.large, b.buf[b.lo:b.hi])
		b.lo, b.buf = 0, *b.large
	case b.lo > 0:
		b.hi = copy(b.buf, b.buf[b.lo:b.hi])
		b.lo = 0
	}
	for range 100 {
		n, err := b.r.Read(b.buf[b.hi:])
		b.full = n > 0 && b.hi+n == len(b.buf)
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
		return &BadJSONError{"unexpected end of input"}
	}
	return b.err
}

// trailing skips whitespace and reports whether anything else follows; at
// the end of the input it reports false, and b.err says how it ended.
func (b *byteScanner) trailing() bool {
	for {
		for b.lo < b.hi {
			switch b.buf[b.lo] {
			case ' ', '\t', '\r', '\n':
				b.lo++
			default:
				return true
			}
		}
		if !b.fill() {
			return false
		}
	}
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
		k, stop := s.step(p[n:], n > 0)
		n += k
		if stop {
			break
		}
	}
	if n > 0 {
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	return 0, io.EOF
}

// step copies plain bytes up to the next quote or backslash into p and
// handles what it finds there; stop asks Read to return what it has rather
// than block for more input.
func (s *stringReader) step(p []byte, have bool) (n int, stop bool) {
	b := s.b
	if b.lo == b.hi {
		if have {
			return 0, true
		}
		if !b.fill() {
			s.err = b.readErr()
			return 0, true
		}
	}
	data := b.buf[b.lo:b.hi]
	if len(data) > len(p) {
		data = data[:len(p)]
	}
	i := asm.IndexJSONSpecial(data)
	if i < 0 {
		b.lo += len(data)
		return copy(p, data), false
	}
	n = copy(p, data[:i])
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
		s.err = &BadJSONError{"control character in string"}
	}
	return n, false
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
		return s.unicodeEscape()
	default:
		return &BadJSONError{"bad escape in string"}
	}
	b.lo += 2
	return nil
}

// unicodeEscape decodes \uXXXX, joining a surrogate pair when one follows.
func (s *stringReader) unicodeEscape() error {
	b := s.b
	if !b.need(6) {
		return b.readErr()
	}
	r1, ok := hex4(b.buf[b.lo+2 : b.lo+6])
	if !ok {
		return &BadJSONError{`bad \u escape`}
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

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
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

// AppendEscaped appends b as the inside of a JSON string. Only ASCII bytes
// are escaped, so b may be cut anywhere, even inside a UTF-8 sequence.
func AppendEscaped(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i, c := range b {
		var esc string
		switch c {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '\b':
			esc = `\b`
		case '\f':
			esc = `\f`
		default:
			if c >= 0x20 {
				continue
			}
		}
		dst = append(dst, b[start:i]...)
		if esc != "" {
			dst = append(dst, esc...)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	return append(dst, b[start:]...)
}

// EscapedLen is the length of b inside a JSON string (AppendEscaped's output).
func EscapedLen(b []byte) int64 {
	var n int64
	for _, c := range b {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

// validLiteral reports whether b is true, false, null or a JSON number.
func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(b)
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
