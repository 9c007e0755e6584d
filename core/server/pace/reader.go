package pace

import (
	"errors"
	"io"
	"net"
	"time"
)

// Reader reads a request body under the minimum-rate rule. The client
// has a budget of time the server waits for its bytes: Grace at the start,
// plus 1/MinRate second for every byte that arrives, banked up to
// ReadTimeout. Only time spent waiting in Read is charged (the server's
// own pauses, such as a slow store, are not); each Read's deadline is the
// budget left, so a body that averages less than MinRate is cut off with a
// timeout soon after its budget is gone, while one that keeps the average
// may pause for as long as it has banked.
type Reader struct {
	r       io.Reader
	conn    net.Conn
	count   *int64        // body bytes read, or nil
	perByte time.Duration // 1/MinRate; 0: no rate rule, only ReadTimeout per read
	bank    time.Duration // most budget that can be banked (ReadTimeout)
	budget  time.Duration
	Expired bool // a Read timed out
	EOF     bool // the body was read to its end
}

// NewReader reads r, arriving on conn, at no less than minRate bytes per
// second on average after grace (minRate <= 0: no rate rule, only
// readTimeout per read), adding the bytes it reads to *count when count
// is not nil.
func NewReader(r io.Reader, conn net.Conn, minRate int64, grace, readTimeout time.Duration, count *int64) *Reader {
	p := &Reader{r: r, conn: conn, count: count, bank: readTimeout, budget: grace}
	if minRate > 0 {
		p.perByte = time.Second / time.Duration(minRate)
		if p.perByte == 0 {
			p.perByte = 1 // over 1 GB/s: a nanosecond a byte
		}
	} else {
		p.budget = readTimeout
	}
	return p
}

// BodyError is a failure reading a request body: the client went away,
// stalled or sent a malformed body. Reader marks every body error so.
type BodyError struct{ Err error }

func (e *BodyError) Error() string { return "server: request body: " + e.Err.Error() }
func (e *BodyError) Unwrap() error { return e.Err }

func (p *Reader) Read(b []byte) (int, error) {
	if p.conn != nil {
		_ = p.conn.SetReadDeadline(time.Now().Add(max(p.budget, time.Millisecond)))
	}
	start := time.Now()
	n, err := p.r.Read(b)
	if p.count != nil {
		*p.count += int64(n)
	}
	switch {
	case p.perByte == 0:
		p.budget = p.bank
	case p.budget < p.bank:
		p.budget = min(p.budget-time.Since(start)+time.Duration(n)*p.perByte, p.bank)
	default: // a grace longer than the bank: spend it first
		p.budget -= time.Since(start)
	}
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
