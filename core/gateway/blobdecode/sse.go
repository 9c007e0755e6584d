package blobdecode

import (
	"bytes"
	"io"
)

// counter counts the upstream's bytes: all those read (total) and those
// of the content string (payload); the rest is bounded by max.
type counter struct {
	total, payload, max int64
}

// slack is what the readers may hold ahead of the parse (the SSE and JSON
// buffers), so payload bytes not yet counted as such: the bound on other
// bytes is enforced within it.
const slack = 2 * bufSize

// bodyReader reads the upstream's body, counting, and makes its errors this
// package's: a read error is a *ReadError, and bytes outside the content
// beyond the bound a *LimitError.
type bodyReader struct {
	r   io.Reader
	cnt *counter
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.cnt.total += int64(n)
	if b.cnt.total-b.cnt.payload > b.cnt.max+slack {
		return n, &LimitError{What: "bytes outside the content", Limit: b.cnt.max}
	}
	if err != nil && err != io.EOF {
		err = &ReadError{Err: err}
	}
	return n, err
}

// sseReader reads a text/event-stream body one event at a time: next
// finds the next event with data of type "message" (or no type), and Read
// yields that event's data (its data lines joined by "\n", as the SSE
// specification builds it) and io.EOF at the blank line that ends it.
// Lines other than data lines are bounded by maxLine; data lines are
// streamed, never held. The body ending inside an event is ErrTruncated
// (an event is only dispatched at its blank line).
type sseReader struct {
	src     io.Reader
	buf     []byte
	pooled  *[]byte // buf, from bufs
	lo, hi  int
	err     error // sticky: the read error, io.EOF at the end
	maxLine int

	cr     bool // the last line ended with CR: an LF next belongs to it
	inData bool // inside the value of a data line
	sep    bool // a data line ended: the next one starts with "\n"
	other  bool // the event's type is not "message": its data is skipped
	ended  bool // the event's blank line was read
}

func newSSEReader(src io.Reader, maxLine int) *sseReader {
	pooled := getBuf()
	return &sseReader{src: src, buf: *pooled, pooled: pooled, maxLine: maxLine}
}

// release gives the buffer back; s must not be used after.
func (s *sseReader) release() {
	putBuf(s.pooled)
	s.buf, s.pooled = nil, nil
}

// fill reads more bytes, keeping buf[lo:hi]; false when none came.
func (s *sseReader) fill() bool {
	if s.err != nil {
		return false
	}
	if s.lo > 0 {
		s.hi = copy(s.buf, s.buf[s.lo:s.hi])
		s.lo = 0
	}
	for range 100 {
		n, err := s.src.Read(s.buf[s.hi:])
		s.hi += n
		if err != nil {
			s.err = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// endErr is the error for a body that stopped inside an event.
func (s *sseReader) endErr() error {
	if s.err == nil || s.err == io.EOF {
		return ErrTruncated
	}
	return s.err
}

// lineEnd is the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// lineKind is what a line of the stream is.
type lineKind int

const (
	blankLine lineKind = iota
	dataLine           // "data:" and one space consumed; the value follows
	fieldLine          // any other field or a comment, consumed
)

// line reads the start of the next line: a data line's field name, or
// all of any other line (bounded). io.EOF when the body ends before it.
func (s *sseReader) line() (kind lineKind, name, value []byte, err error) {
	for {
		data := s.buf[s.lo:s.hi]
		if s.cr && len(data) > 0 {
			s.cr = false
			if data[0] == '\n' {
				s.lo++
				continue
			}
		}
		if len(data) >= 5 && string(data[:5]) == "data:" {
			return s.dataStart()
		}
		if i := lineEnd(data); i >= 0 {
			return s.fieldLine(data[:i])
		}
		if len(data) > s.maxLine {
			return 0, nil, nil, &LimitError{What: "SSE line", Limit: int64(s.maxLine)}
		}
		if !s.fill() {
			if len(s.buf[s.lo:s.hi]) == 0 && s.err == io.EOF {
				return 0, nil, nil, io.EOF
			}
			return 0, nil, nil, s.endErr()
		}
	}
}

// dataStart consumes "data:" and the one space that may follow.
func (s *sseReader) dataStart() (lineKind, []byte, []byte, error) {
	s.lo += 5
	if !(s.lo < s.hi || s.fill()) {
		return 0, nil, nil, s.endErr()
	}
	if s.buf[s.lo] == ' ' {
		s.lo++
	}
	return dataLine, nil, nil, nil
}

// fieldLine consumes line and its terminator; "data" alone is a data
// line with an empty value (its terminator left for Read).
func (s *sseReader) fieldLine(line []byte) (lineKind, []byte, []byte, error) {
	if len(line) > s.maxLine {
		return 0, nil, nil, &LimitError{What: "SSE line", Limit: int64(s.maxLine)}
	}
	if string(line) == "data" {
		s.lo += 4
		return dataLine, nil, nil, nil
	}
	s.lo += len(line)
	s.endLine()
	if len(line) == 0 {
		return blankLine, nil, nil, nil
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value, _ = bytes.CutPrefix(value, []byte(" "))
	return fieldLine, name, value, nil
}

// endLine consumes the CR or LF at lo (CR+LF counts as one: see cr).
func (s *sseReader) endLine() {
	s.cr = s.buf[s.lo] == '\r'
	s.lo++
}

// next finds the next event with data of type "message" and stops at the
// start of its data; io.EOF when the stream ends first. An event's type
// is judged at its first data line: an event field after it, in an event
// being skipped too, changes nothing.
func (s *sseReader) next() error {
	s.inData, s.sep, s.other, s.ended = false, false, false, false
	judged := false
	for {
		kind, name, value, err := s.line()
		if err != nil {
			return err
		}
		switch {
		case kind == blankLine:
			s.other, judged = false, false
		case kind == fieldLine && string(name) == "event" && !judged:
			s.other = len(value) > 0 && string(value) != "message"
		case kind == dataLine && s.other:
			judged = true
			if err := s.discardLine(); err != nil {
				return err
			}
		case kind == dataLine:
			s.inData = true
			return nil
		}
	}
}

// discardLine reads and drops the rest of a data line.
func (s *sseReader) discardLine() error {
	for {
		if i := lineEnd(s.buf[s.lo:s.hi]); i >= 0 {
			s.lo += i
			s.endLine()
			return nil
		}
		s.lo = s.hi
		if !s.fill() {
			return s.endErr()
		}
	}
}

// Read yields the current event's data.
func (s *sseReader) Read(p []byte) (int, error) {
	for len(p) > 0 {
		switch {
		case s.ended:
			return 0, io.EOF
		case s.inData && s.sep:
			s.sep = false
			p[0] = '\n'
			return 1, nil
		case s.inData:
			n, done := s.readData(p)
			if n > 0 {
				return n, nil
			}
			if !done && !s.fill() {
				return 0, s.endErr()
			}
		default:
			if err := s.nextLine(); err != nil {
				return 0, err
			}
		}
	}
	return 0, nil
}

// readData copies data line bytes into p up to the line's end; done when
// the line ended.
func (s *sseReader) readData(p []byte) (n int, done bool) {
	data := s.buf[s.lo:s.hi]
	if len(data) > len(p) {
		data = data[:len(p)]
	}
	i := lineEnd(data)
	if i < 0 {
		s.lo += len(data)
		return copy(p, data), false
	}
	n = copy(p, data[:i])
	s.lo += i
	s.endLine()
	s.inData, s.sep = false, true
	return n, true
}

// nextLine reads the line after a data line: the blank line that ends
// the event, another data line, or another field (ignored: an event
// field after the first data line does not change the event's type).
func (s *sseReader) nextLine() error {
	kind, _, _, err := s.line()
	switch {
	case err == io.EOF:
		return ErrTruncated
	case err != nil:
		return err
	case kind == blankLine:
		s.ended = true
	case kind == dataLine:
		s.inData = true
	}
	return nil
}
