package mcphttp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/bodyrate"
)

// pacedBody reads a request body under the minimum-rate rule (package
// bodyrate: each Read's deadline is the budget left) and the request size
// bound.
type pacedBody struct {
	r       io.ReadCloser
	rc      *http.ResponseController
	rate    bodyrate.Budget
	left    int64 // bytes still allowed, plus one (MaxRequestBytes+1)
	expired bool  // a Read timed out
	over    bool  // the body passed MaxRequestBytes
}

func newPacedBody(r io.ReadCloser, rc *http.ResponseController, o Options) *pacedBody {
	return &pacedBody{r: r, rc: rc, rate: bodyrate.New(o.BodyMinRate, o.BodyGrace, o.BodyReadTimeout), left: o.MaxRequestBytes + 1}
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
	_ = p.rc.SetReadDeadline(p.rate.Deadline(time.Now()))
	start := time.Now()
	n, err := p.r.Read(b)
	p.left -= int64(n)
	p.rate.Charge(time.Since(start), n)
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
