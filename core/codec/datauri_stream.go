package codec

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// DataURIReader decodes the payload of a data URI read from an io.Reader,
// as it arrives: base64 through the streaming decoder, percent-encoded
// payloads byte by byte. It holds one 64 KiB buffer whatever the payload size.
//
// The source is the URI text itself, starting at "data:". A caller that
// takes the URI out of a JSON string (core/mcp) hands over a reader that has
// already undone the JSON escapes.
type DataURIReader struct {
	// Header is parsed by NewDataURIReader, before any payload byte is
	// decoded, so callers can check it (see [MatchAccept]) and stop early.
	Header DataURIHeader

	dec   *decoder   // base64 payloads
	pct   pctDecoder // percent-encoded payloads
	start int        // offset of the payload in the URI
}

// NewDataURIReader reads and parses the header of the data URI that r
// yields, up to and including the ',' separator, and returns a reader of the
// decoded payload. The header may be at most [MaxDataURIHeader] bytes long.
//
// Errors in the URI are [*DataURIError]s, from NewDataURIReader for the
// header and from Read for the payload, with the same messages as
// [ParseDataURI] for the same URI. Errors from r are returned as they are
// (wrapped with %w while reading the header).
func NewDataURIReader(r io.Reader) (*DataURIReader, error) {
	return newDataURIReader(r, decChunk)
}

// newDataURIReader uses a buffer of at most bufSize bytes (at least enough
// for the longest header).
func newDataURIReader(r io.Reader, bufSize int) (*DataURIReader, error) {
	const limit = len("data:") + MaxDataURIHeader + 1 // a ',' must be within limit bytes
	buf := make([]byte, min(max(bufSize, limit), decChunk))
	n, comma, empty := 0, -1, 0
	var rerr error
	for {
		if n >= 5 && !strings.EqualFold(string(buf[:5]), "data:") {
			return nil, &DataURIError{Reason: `missing "data:" scheme`, Err: ErrNotDataURI}
		}
		if n > 5 {
			if comma = bytes.IndexByte(buf[5:min(n, limit)], ','); comma >= 0 {
				comma += 5
				break
			}
		}
		if n >= limit {
			return nil, &DataURIError{Reason: fmt.Sprintf("header longer than %d bytes", MaxDataURIHeader)}
		}
		if rerr == io.EOF {
			if n < 5 {
				return nil, &DataURIError{Reason: `missing "data:" scheme`, Err: ErrNotDataURI}
			}
			return nil, &DataURIError{Reason: "missing ',' separator"}
		}
		if rerr != nil {
			return nil, fmt.Errorf("codec: data URI: reading header: %w", rerr)
		}
		var m int
		m, rerr = r.Read(buf[n:])
		n += m
		if m == 0 && rerr == nil {
			if empty++; empty >= maxConsecutiveEmptyReads {
				rerr = io.ErrNoProgress
			}
		}
	}
	h, err := parseDataURIHeader(string(buf[5:comma]))
	if err != nil {
		return nil, err
	}
	d := &DataURIReader{Header: h, start: comma + 1}
	if h.Base64 {
		d.dec = &decoder{enc: StdEncoding, r: r, in: buf, lo: comma + 1, hi: n, rerr: rerr}
	} else {
		d.pct = pctDecoder{r: r, in: buf, lo: comma + 1, hi: n, rerr: rerr}
	}
	return d, nil
}

// Read reads decoded payload bytes. It returns io.EOF at the end of a valid
// payload, a [*DataURIError] at malformed payload (after the bytes decoded
// before it), or the error of the underlying reader.
func (d *DataURIReader) Read(p []byte) (int, error) {
	if d.dec == nil {
		return d.pct.Read(p)
	}
	n, err := d.dec.Read(p)
	return n, d.payloadErr(err)
}

// WriteTo writes the decoded payload to w, for io.Copy.
func (d *DataURIReader) WriteTo(w io.Writer) (int64, error) {
	if d.dec == nil {
		return io.Copy(w, struct{ io.Reader }{&d.pct}) // hide WriteTo: no recursion
	}
	n, err := d.dec.WriteTo(w)
	return n, d.payloadErr(err)
}

// payloadErr turns a base64 decoding error into a *DataURIError.
func (d *DataURIReader) payloadErr(err error) error {
	if err == nil || err == io.EOF || !d.dec.corrupt {
		return err
	}
	return d.corruptErr(err)
}

// corruptErr describes a base64 error of the payload.
func (d *DataURIReader) corruptErr(err error) error {
	switch c, ok := err.(base64.CorruptInputError); {
	case err == io.ErrUnexpectedEOF:
		return &DataURIError{Reason: fmt.Sprintf("truncated base64 at byte %d", d.dec.qoff), Err: err}
	case ok:
		reason := fmt.Sprintf("bad base64 at byte %d", int64(c))
		if i := int64(c) - d.dec.qoff; i >= 0 && i < 4 && d.dec.q[i] == '%' {
			reason += " (percent-escapes are not allowed in base64 payloads)"
		}
		return &DataURIError{Reason: reason, Err: err}
	}
	return err // from the underlying reader
}

// pctDecoder decodes a percent-encoded payload.
type pctDecoder struct {
	r      io.Reader
	in     []byte
	lo, hi int
	off    int64 // payload offset of in[lo]
	rerr   error
	err    error
}

func (p *pctDecoder) Read(dst []byte) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	empty := 0
	for {
		if p.err != nil {
			return 0, p.err
		}
		n := p.decode(dst, p.rerr == io.EOF)
		if n > 0 {
			if p.err == io.EOF {
				return n, nil
			}
			return n, p.err
		}
		if p.err != nil {
			continue
		}
		if p.rerr != nil {
			p.err = p.rerr
			continue
		}
		// Keep an incomplete escape (at most 2 bytes) and read more.
		k := copy(p.in, p.in[p.lo:p.hi])
		p.lo, p.hi = 0, k
		m, err := p.r.Read(p.in[k:])
		p.hi += m
		p.rerr = err
		if m == 0 && err == nil {
			if empty++; empty >= maxConsecutiveEmptyReads {
				p.err = io.ErrNoProgress
			}
		}
	}
}

// decode percent-decodes in[lo:hi] into dst and returns the bytes written,
// recording a malformed escape or the end of the payload in p.err.
func (p *pctDecoder) decode(dst []byte, eof bool) int {
	n := 0
	for n < len(dst) && p.lo < p.hi {
		src := p.in[p.lo:p.hi]
		if src[0] != '%' {
			if i := bytes.IndexByte(src, '%'); i >= 0 {
				src = src[:i]
			}
			k := copy(dst[n:], src)
			n += k
			p.lo += k
			p.off += int64(k)
			continue
		}
		if len(src) < 3 && !eof {
			return n // the escape continues in the next read
		}
		if len(src) < 3 || unhex(src[1]) > 15 || unhex(src[2]) > 15 {
			p.err = &DataURIError{Reason: fmt.Sprintf("bad percent-escape at byte %d", p.off)}
			return n
		}
		dst[n] = unhex(src[1])<<4 | unhex(src[2])
		n++
		p.lo += 3
		p.off += 3
	}
	if eof && p.lo == p.hi {
		p.err = io.EOF
	}
	return n
}

// DataURIWriter writes a base64 data URI to an io.Writer as the payload is
// written to it; see [NewDataURIWriter].
type dataURIWriter struct {
	w      io.Writer
	header string
	enc    io.WriteCloser
	err    error
}

// NewDataURIWriter returns a writer that writes "data:<mediaType>;base64,"
// to w, then the base64 of everything written to it, in chunks, without
// holding the payload. Close writes the final group and padding; it does not
// close w. mediaType is used as by [FormatDataURI].
func NewDataURIWriter(w io.Writer, mediaType string) io.WriteCloser {
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	return &dataURIWriter{w: w, header: "data:" + mediaType + ";base64,"}
}

func (d *dataURIWriter) start() error {
	if d.enc == nil && d.err == nil {
		_, d.err = io.WriteString(d.w, d.header)
		d.enc = NewEncoder(StdEncoding, d.w)
	}
	return d.err
}

func (d *dataURIWriter) Write(p []byte) (int, error) {
	if err := d.start(); err != nil {
		return 0, err
	}
	return d.enc.Write(p)
}

// ReadFrom encodes everything r yields, for io.Copy.
func (d *dataURIWriter) ReadFrom(r io.Reader) (int64, error) {
	if err := d.start(); err != nil {
		return 0, err
	}
	return d.enc.(io.ReaderFrom).ReadFrom(r)
}

func (d *dataURIWriter) Close() error {
	if err := d.start(); err != nil {
		return err
	}
	return d.enc.Close()
}
