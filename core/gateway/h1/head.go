package h1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
)

// ErrMalformed is the error of a response head h1 does not read: not
// HTTP at all (its first line is no status line), or a head it does not
// read plainly; every such error wraps it.
var ErrMalformed = errors.New("h1: malformed response from the upstream")

// readHead reads a response's status line and headers from br, and sets
// its body up as net/http's ReadResponse does (chunked, of a declared
// length, or to the connection's end; none for a HEAD, 1xx, 204 and 304),
// with less work: the head is one string the header values are cut
// from, and the header map is sized once. A head it does not read plainly
// (a folded line, a line with no colon, a name that is no token, a value
// with a control character, a transfer coding but chunked, lengths that
// disagree) is an error.
func readHead(br *bufio.Reader, req *http.Request, scratch []byte) (*http.Response, []byte, error) {
	head := scratch[:0]
	var ends [64]int // where each line ends in head; more lines spill to a slice
	lines := ends[:0]
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				err = ErrHeadersTooLarge
			} else if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, head, err
		}
		line = trimEOL(line)
		if len(lines) == 0 && !bytes.HasPrefix(line, []byte("HTTP/")) {
			return nil, head, ErrMalformed // not HTTP (an SSH banner): no need to wait for more
		}
		if len(line) == 0 {
			break
		}
		head = append(head, line...)
		lines = append(lines, len(head))
	}
	if len(lines) == 0 {
		return nil, head, ErrMalformed
	}
	resp, err := parseHead(string(head), lines, req)
	return resp, head, err
}

// trimEOL drops a line's CRLF (or bare LF).
func trimEOL(line []byte) []byte {
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

// parseHead makes the response of head (its lines end at lines).
func parseHead(head string, lines []int, req *http.Request) (*http.Response, error) {
	resp := &http.Response{Request: req}
	if err := parseStatus(resp, head[:lines[0]]); err != nil {
		return nil, err
	}
	resp.Header = make(http.Header, len(lines)-1)
	values := make([]string, len(lines)-1) // one slice for all the values (net/textproto's way)
	for i := 1; i < len(lines); i++ {
		line := head[lines[i-1]:lines[i]]
		colon := strings.IndexByte(line, ':')
		if colon <= 0 || !validName(line[:colon]) {
			return nil, ErrMalformed
		}
		name := http.CanonicalHeaderKey(line[:colon])
		values[i-1] = strings.Trim(line[colon+1:], " \t")
		if !validValue(values[i-1]) {
			return nil, ErrMalformed
		}
		if vs, ok := resp.Header[name]; ok {
			resp.Header[name] = append(vs, values[i-1])
		} else {
			resp.Header[name] = values[i-1 : i : i]
		}
	}
	return resp, nil
}

// validValue reports whether v holds no control character but tab (a
// bare CR among them, which a client down the line could take for a line's
// end).
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// parseStatus reads "HTTP/1.x NNN reason".
func parseStatus(resp *http.Response, line string) error {
	proto, status, ok := strings.Cut(line, " ")
	switch proto {
	case "HTTP/1.1":
		resp.ProtoMinor = 1
	case "HTTP/1.0":
	default:
		return ErrMalformed
	}
	resp.Proto, resp.ProtoMajor = proto, 1
	code, _, _ := strings.Cut(status, " ")
	if !ok || len(code) != 3 {
		return ErrMalformed
	}
	n, err := strconv.Atoi(code)
	if err != nil || n < 100 {
		return ErrMalformed
	}
	resp.StatusCode, resp.Status = n, status
	return nil
}

// frame sets resp's body, length and Close as its headers say, reading
// from br.
func frame(resp *http.Response, br *bufio.Reader) error {
	h := resp.Header
	resp.Close = closes(resp)
	te := h["Transfer-Encoding"]
	noBody := resp.Request.Method == http.MethodHead || resp.StatusCode < 200 ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	n, err := declaredLength(h["Content-Length"])
	switch {
	case err != nil:
		return err
	case len(te) > 0 && resp.ProtoMinor == 1:
		if len(te) != 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
			return fmt.Errorf("%w: its transfer coding is not chunked", ErrMalformed)
		}
		delete(h, "Transfer-Encoding")
		delete(h, "Content-Length")
		resp.TransferEncoding, resp.ContentLength = []string{"chunked"}, -1
		if noBody {
			resp.Body = http.NoBody
			return nil
		}
		resp.Body = &chunkedBody{cr: httputil.NewChunkedReader(br), br: br}
	case noBody:
		resp.ContentLength = 0
		if resp.Request.Method == http.MethodHead {
			resp.ContentLength = n
		}
		resp.Body = http.NoBody
	case n == 0:
		resp.ContentLength, resp.Body = 0, http.NoBody
	case n > 0:
		resp.ContentLength = n
		resp.Body = &lengthBody{br: br, left: n}
	default: // to the connection's end
		resp.ContentLength, resp.Close = -1, true
		resp.Body = io.NopCloser(br)
	}
	return nil
}

// closes reports whether the connection ends with this response: a
// Connection: close, or HTTP/1.0 without keep-alive.
func closes(resp *http.Response) bool {
	has := func(token string) bool {
		for _, v := range resp.Header["Connection"] {
			for t := range strings.SplitSeq(v, ",") {
				if strings.EqualFold(strings.TrimSpace(t), token) {
					return true
				}
			}
		}
		return false
	}
	if resp.ProtoMinor == 0 {
		return !has("keep-alive")
	}
	return has("close")
}

// declaredLength is the Content-Length of values (-1 none); several that
// differ are an error.
func declaredLength(values []string) (int64, error) {
	if len(values) == 0 {
		return -1, nil
	}
	first := strings.TrimSpace(values[0])
	for _, v := range values[1:] {
		if strings.TrimSpace(v) != first {
			return 0, fmt.Errorf("%w: Content-Length values that differ", ErrMalformed)
		}
	}
	n, err := strconv.ParseUint(first, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("%w: a bad Content-Length", ErrMalformed)
	}
	return int64(n), nil
}

// lengthBody is a body of a declared length; it ends with io.EOF along
// with its last bytes, and a connection that ends before is
// io.ErrUnexpectedEOF.
type lengthBody struct {
	br   *bufio.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		return n, io.EOF
	case errors.Is(err, io.EOF):
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }

// chunkedBody is a chunked body; at its last chunk the trailer is read
// (and dropped) before io.EOF.
type chunkedBody struct {
	cr io.Reader
	br *bufio.Reader
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	n, err := b.cr.Read(p)
	if errors.Is(err, io.EOF) {
		if terr := skipTrailer(b.br); terr != nil {
			return n, terr
		}
	}
	return n, err
}

func (b *chunkedBody) Close() error { return nil }

// skipTrailer reads the lines after a last chunk, to the empty one.
func skipTrailer(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, io.EOF):
			return io.ErrUnexpectedEOF
		case err != nil:
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}
