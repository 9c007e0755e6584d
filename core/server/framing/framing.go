package framing

import (
	"bytes"
	"errors"
)

// The reasons Check refuses a header block; each is the message of the
// 400 the client gets.
var (
	ErrBareLF           = errors.New("a header line ends in a bare LF; lines end in CRLF")
	ErrObsFold          = errors.New("a header line is folded (starts with a space or tab); obs-fold is not accepted")
	ErrTransferEncoding = errors.New(`Transfer-Encoding must be one field with the value "chunked"`)
	ErrBothLengths      = errors.New("a request cannot have both Transfer-Encoding and Content-Length")
	ErrUnterminated     = errors.New("the header block does not end in an empty line")
)

var (
	transferEncoding = []byte("transfer-encoding:")
	contentLength    = []byte("content-length:")
	chunked          = []byte("chunked")
)

// Check reports why the raw header block raw (the header lines after the
// request line, through the empty line that ends them) frames its body
// ambiguously, or nil. An empty raw (a request with no header fields)
// passes. Check does not allocate.
func Check(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	var f fields
	for {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			return ErrUnterminated
		}
		if i == 0 || raw[i-1] != '\r' {
			return ErrBareLF
		}
		line, rest := raw[:i-1], raw[i+1:]
		if len(line) == 0 {
			return f.check() // the empty line that ends the block
		}
		if isFold(line) || isFold(rest) {
			return ErrObsFold
		}
		if err := f.add(line); err != nil {
			return err
		}
		raw = rest
	}
}

// fields is what Check has seen of the framing fields.
type fields struct{ transferEncoding, contentLength bool }

// add notes a header line; it refuses a Transfer-Encoding other than one
// "chunked".
func (f *fields) add(line []byte) error {
	switch {
	case line[0]|0x20 != 't' && line[0]|0x20 != 'c':
		// Neither: most lines stop here.
	case hasPrefixFold(line, transferEncoding):
		if f.transferEncoding || !bytes.Equal(trimSP(line[len(transferEncoding):]), chunked) {
			return ErrTransferEncoding
		}
		f.transferEncoding = true
	case hasPrefixFold(line, contentLength):
		f.contentLength = true
	}
	return nil
}

// check refuses both framing fields at once.
func (f *fields) check() error {
	if f.transferEncoding && f.contentLength {
		return ErrBothLengths
	}
	return nil
}

// isFold reports whether b starts with a space or tab: an obs-fold line.
func isFold(b []byte) bool { return len(b) > 0 && (b[0] == ' ' || b[0] == '\t') }

// hasPrefixFold reports whether b begins with prefix (in lower case),
// its ASCII letters in either case.
func hasPrefixFold(b, prefix []byte) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i, c := range prefix {
		if b[i] != c && (c < 'a' || c > 'z' || b[i]|0x20 != c) {
			return false
		}
	}
	return true
}

// trimSP removes the spaces (not tabs) around a field value.
func trimSP(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}
