package mcphttp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// pacedBody reads a request body under the minimum-rate rule and the
// request size bound. The client has a budget of time the server waits for
// its bytes: the grace at the start, plus 1/minRate second for every byte
// that arrives, banked up to the read timeout. Only time spent waiting in
// Read is charged; each Read's deadline is the budget left, so a body that
// averages less than the rate is cut off soon after its budget is gone.
type pacedBody struct {
	r       io.ReadCloser
	rc      *http.ResponseController
	perByte time.Duration // 1/minRate; 0: no rate rule
	bank    time.Duration
	budget  time.Duration
	left    int64 // bytes still allowed, plus one (MaxRequestBytes+1)
	expired bool  // a Read timed out
	over    bool  // the body passed MaxRequestBytes
}

func newPacedBody(r io.ReadCloser, rc *http.ResponseController, o Options) *pacedBody {
	p := &pacedBody{r: r, rc: rc, bank: o.BodyReadTimeout, budget: o.BodyGrace, left: o.MaxRequestBytes + 1}
	if o.BodyMinRate > 0 {
		p.perByte = max(time.Second/time.Duration(o.BodyMinRate), 1)
	} else {
		p.budget = o.BodyReadTimeout
	}
	return p
}

// errBodyTooLarge ends a body longer than MaxRequestBytes.
var errBodyTooLarge = errors.New("mcphttp: request body over MaxRequestBytes")

func (p *pacedBody) Read(b []byte) (int, error) {
	if p.over {
		return 0, errBodyTooLarge
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	_ = p.rc.SetReadDeadline(time.Now().Add(max(p.budget, time.Millisecond)))
	start := time.Now()
	n, err := p.r.Read(b)
	p.left -= int64(n)
	switch {
	case p.perByte == 0:
		p.budget = p.bank
	case p.budget < p.bank:
		p.budget = min(p.budget-time.Since(start)+time.Duration(n)*p.perByte, p.bank)
	default: // a grace longer than the bank: spend it first
		p.budget -= time.Since(start)
	}
	var ne net.Error
	if err != nil && err != io.EOF && (errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		p.expired = true
	}
	if p.left == 0 && n > 0 { // one byte more than MaxRequestBytes
		p.over = true
		return n - 1, errBodyTooLarge
	}
	return n, err
}

// failure is the answer a body cut short calls for, or nil: 408 when it
// arrived too slowly, 413 when it was too long.
func (p *pacedBody) failure() *mcp.Error {
	switch {
	case p == nil:
		return nil
	case p.expired:
		return mcp.NewError(mcp.CodeTransport, "Request Timeout: the request body arrived slower than the minimum rate", nil).
			WithStatus(http.StatusRequestTimeout)
	case p.over:
		return tooLarge()
	}
	return nil
}
