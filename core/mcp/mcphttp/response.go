package mcphttp

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// response is the mcp.ResponseWriter over an http.ResponseWriter. The
// server's answer is held until ServeMCP returns (headers go straight to
// the http.Header), so the handler can still replace it with the answer
// to a body cut short; then commit sends it, running a streamed body on
// the handler's goroutine.
type response struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration

	status  int
	body    []byte
	stream  func(mcp.StreamWriter) error
	size    int64         // the streamed body's length, -1 unknown
	raw     io.ReadCloser // a resources/stream body (SendBody)
	rawSize int64
}

func (r *response) SetStatus(code int)           { r.status = code }
func (r *response) SetHeader(name, value string) { r.w.Header().Set(name, value) }
func (r *response) SetBody(b []byte)             { r.body = b }

func (r *response) SetBodyStream(size int64, write func(mcp.StreamWriter) error) {
	r.size, r.stream = size, write
}

// SendBody implements resstream.BodySender: a resources/stream body goes
// out through sendBody, by sendfile when it is a file.
func (r *response) SendBody(rc io.ReadCloser, size int64) { r.raw, r.rawSize = rc, size }

// refuse replaces the answer with e and closes the connection; a streamed
// body is run against a failing writer so what it holds is released.
func (r *response) refuse(e *mcp.Error) {
	if r.raw != nil {
		r.raw.Close()
		r.raw = nil
	}
	if r.stream != nil {
		_ = r.stream(failingWriter{})
		r.stream = nil
	}
	clear(r.w.Header())
	for k, v := range e.Header {
		r.w.Header().Set(k, v)
	}
	r.w.Header().Set("Connection", "close")
	r.w.Header().Set("Content-Type", "application/json")
	r.status, r.body = e.HTTPStatus(), mcp.ErrorBody(e.Code, e.Message)
}

// commit sends the answer. A body that fails midway aborts the response
// (http.ErrAbortHandler): the client sees a broken body, never a short one
// that looks complete.
func (r *response) commit() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	var err error
	switch {
	case r.raw != nil:
		err = r.sendBody()
	case r.stream != nil:
		if r.size >= 0 {
			r.w.Header().Set("Content-Length", strconv.FormatInt(r.size, 10))
		}
		r.w.WriteHeader(r.status)
		_ = r.rc.Flush() // the headers go now: an SSE client sees its stream open
		err = r.stream(streamWriter{r})
	default:
		r.w.Header().Set("Content-Length", strconv.Itoa(len(r.body)))
		r.w.WriteHeader(r.status)
		if len(r.body) > 0 {
			_, err = r.w.Write(r.body)
		}
	}
	if err != nil {
		panic(http.ErrAbortHandler)
	}
}

// sendChunk is how much of a file one sendfile call may send before the
// write deadline is renewed.
const sendChunk = 8 << 20

// sendBody sends a resources/stream body of rawSize bytes. A file
// ([resstream.BodyFile]) of known size reaches the ResponseWriter's ReadFrom as
// an *io.LimitedReader over the *os.File, which net/http sends with
// sendfile(2); anything else is copied.
func (r *response) sendBody() error {
	defer r.raw.Close()
	size := r.rawSize
	if size >= 0 {
		r.w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	r.w.WriteHeader(r.status)
	_ = r.rc.Flush() // the headers go first, so ReadFrom need not sniff
	f, isFile := resstream.BodyFile(r.raw)
	if !isFile || size < 0 {
		n, err := io.Copy(streamWriter{r}, struct{ io.Reader }{r.raw})
		if err == nil && size >= 0 && n != size {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	for left := size; left > 0; {
		_ = r.rc.SetWriteDeadline(time.Now().Add(r.writeTimeout))
		n, err := io.Copy(r.w, &io.LimitedReader{R: f, N: min(left, sendChunk)})
		left -= n
		if err == nil && n == 0 {
			err = io.ErrUnexpectedEOF // the file is shorter than its Size
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// streamWriter writes a streamed body, each write and flush under the
// write deadline.
type streamWriter struct{ r *response }

func (s streamWriter) Write(p []byte) (int, error) {
	_ = s.r.rc.SetWriteDeadline(time.Now().Add(s.r.writeTimeout))
	return s.r.w.Write(p)
}

func (s streamWriter) Flush() error {
	_ = s.r.rc.SetWriteDeadline(time.Now().Add(s.r.writeTimeout))
	return s.r.rc.Flush()
}

// errRefused is what a streamed body of a refused request sees.
var errRefused = errors.New("mcphttp: response refused")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errRefused }
func (failingWriter) Flush() error              { return errRefused }
