package limits

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// CodeLimitExceeded is the JSON-RPC error code of a request refused by a
// limit on protocol state ([Limits]); its data names the limit.
const CodeLimitExceeded = -32029

// retryAfter is the Retry-After of a refusal that waits on other requests
// giving state back, not on a clock.
const retryAfter = 5 * time.Second

// Refusal turns a budget refusal into the protocol's answer: HTTP 429
// when the principal's own bound was met, 503 when the node's, with
// Retry-After, and data {"limit", "scope", "max"}; what names the state
// refused. nil for any other error.
func Refusal(err error, what string) *jsonrpc.Error {
	var e *budget.Exceeded
	if !errors.As(err, &e) {
		return nil
	}
	status, who := http.StatusTooManyRequests, "for this principal"
	if e.Scope == budget.PerNode {
		status, who = http.StatusServiceUnavailable, "on this node"
	}
	wait := e.RetryAfter
	if wait <= 0 {
		wait = retryAfter
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	data := map[string]any{"limit": e.Name, "scope": string(e.Scope), "max": e.Max}
	return jsonrpc.NewError(CodeLimitExceeded, "Too Many Requests: "+what+" (at most "+strconv.FormatInt(e.Max, 10)+" "+who+")", data).
		WithStatus(status).WithHeader("Retry-After", strconv.FormatInt(secs, 10))
}
