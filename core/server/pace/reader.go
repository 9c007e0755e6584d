package pace

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/bodyrate"
)

// Reader reads a request body under the minimum-rate rule (package
// bodyrate): each Read's deadline on the connection is the budget left, so
// a body that averages less than the rate is cut off with a timeout soon
// after its budget is gone, while one that keeps the average may pause for
// as long as it has banked.
type Reader struct {
	r       io.Reader
	conn    net.Conn
	count   *int64 // body bytes read, or nil
	rate    bodyrate.Budget
	Expired bool // a Read timed out
	EOF     bool // the body was read to its end
}

// NewReader reads r, arriving on conn, at no less than minRate bytes per
// second on average after grace (minRate <= 0: no rate rule, only
// readTimeout per read), adding the bytes it reads to *count when count
// is not nil.
func NewReader(r io.Reader, conn net.Conn, minRate int64, grace, readTimeout time.Duration, count *int64) *Reader {
	return &Reader{r: r, conn: conn, count: count, rate: bodyrate.New(minRate, grace, readTimeout)}
}

// BodyError is a failure reading a request body: the client went away,
// stalled or sent a malformed body. Reader marks every body error so.
type BodyError struct{ Err error }

func (e *BodyError) Error() string { return "server: request body: " + e.Err.Error() }
func (e *BodyError) Unwrap() error { return e.Err }

func (p *Reader) Read(b []byte) (int, error) {
	if p.conn != nil {
		_ = p.conn.SetReadDeadline(p.rate.Deadline(time.Now()))
	}
	start := time.Now()
	n, err := p.r.Read(b)
	if p.count != nil {
		*p.count += int64(n)
	}
	p.rate.Charge(time.Since(start), n)
	var ne net.Error
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		p.EOF = true
		return n, err
	case errors.As(err, &ne) && ne.Timeout():
		p.Expired = true
	}
	// The client's failure (gone, too slow, bad chunked framing), told
	// apart from storage's where both meet in one copy.
	return n, &BodyError{err}
}
