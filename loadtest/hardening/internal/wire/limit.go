package wire

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// CodeLimitExceeded is the JSON-RPC error code of a request refused by a
// limit on protocol state (core/mcp's CodeLimitExceeded; docs/protocol.md).
const CodeLimitExceeded = -32029

// LimitNames are the limits a refusal's data.limit may name: the pools and
// the claims rate of core/mcp/limits, and the capability bytes.
var LimitNames = []string{"sessions", "subscriptions", "subscription_bytes", "streams", "pending",
	"claims_per_minute", "capability_bytes"}

// RPCError is a JSON-RPC error object with the data a limit refusal carries.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Limit string          `json:"limit"`
		Scope string          `json:"scope"`
		Max   json.RawMessage `json:"max"`
	} `json:"data"`
}

// RPCOutcome is the JSON-RPC message of an answer, read for its error,
// whether it is a result, and its method (a server-to-client request or a
// notification on an SSE stream).
type RPCOutcome struct {
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// Outcome parses the JSON-RPC message of a (JSON or SSE) answer; ok is
// false when the body holds none.
func Outcome(a *Answer) (o RPCOutcome, ok bool) {
	msg, err := mcpc.Message(a.ContentType(), a.Body)
	if err != nil || json.Unmarshal(msg, &o) != nil {
		return o, false
	}
	return o, o.Error != nil || o.Result != nil || o.Method != ""
}

// JudgeLimit judges an /mcp answer to a request that may meet a limit on
// protocol state. Clear is exactly the refusal docs/protocol.md states:
// JSON-RPC error
// -32029 whose data.limit names a limit ([LimitNames]) and data.scope its
// scope, with HTTP 429 and Retry-After for the principal's bound and 503
// and Retry-After for the node's; inside an SSE stream whose 200 was
// already sent, the error alone. Accepted is a 2xx without a JSON-RPC
// error. 5xx other than that 503, and -32603, are server errors; any other
// refusal, and no answer, is unclear.
func JudgeLimit(a *Answer) (Verdict, string) {
	if a.Status == 0 {
		return Unclear, a.String()
	}
	o, ok := Outcome(a)
	switch {
	case ok && o.Error != nil && o.Error.Code == CodeLimitExceeded:
		return judgeLimitError(a, o.Error)
	case a.Status >= 500:
		return ServerError, a.String()
	case ok && o.Error != nil && o.Error.Code == -32603:
		return ServerError, "JSON-RPC internal error: " + a.String()
	case ok && o.Error != nil:
		return Unclear, "refused, but not by a limit (-32029 with data.limit): " + a.String()
	case a.Status >= 300:
		return Unclear, "HTTP " + strconv.Itoa(a.Status) + " without the limit's JSON-RPC error: " + a.String()
	}
	return Accepted, ""
}

// judgeLimitError checks a -32029 error's data, status and Retry-After.
func judgeLimitError(a *Answer, e *RPCError) (Verdict, string) {
	d := e.Data
	want := map[string]int{"principal": http.StatusTooManyRequests, "node": http.StatusServiceUnavailable}[d.Scope]
	inStream := a.Status == http.StatusOK && strings.HasPrefix(a.ContentType(), "text/event-stream")
	switch {
	case !slices.Contains(LimitNames, d.Limit):
		return Unclear, "-32029 whose data.limit names no limit: " + a.String()
	case want == 0:
		return Unclear, "-32029 whose data.scope is neither principal nor node: " + a.String()
	case strings.TrimSpace(e.Message) == "" || len(d.Max) == 0:
		return Unclear, "-32029 without a message or data.max: " + a.String()
	case inStream:
		return Clear, ""
	case a.Status != want:
		return Unclear, "-32029 for the " + d.Scope + " bound with HTTP " + strconv.Itoa(a.Status) + ", want " + strconv.Itoa(want) + ": " + a.String()
	case !retryAfter(a):
		return Unclear, "-32029 without a Retry-After of whole seconds: " + a.String()
	}
	return Clear, ""
}

// JudgeClaims judges a byte-plane answer (/d, /u) to a request that may
// meet the claims rate: Clear is exactly HTTP 429 with the JSON body code
// too_many_claims, a message and Retry-After; Accepted a 2xx.
func JudgeClaims(a *Answer) (Verdict, string) {
	code, msg, ok := apiError(a.Body)
	switch {
	case a.Status == 0:
		return Unclear, a.String()
	case a.Status >= 500:
		return ServerError, a.String()
	case a.Status < 300:
		return Accepted, ""
	case a.Status != http.StatusTooManyRequests || !ok || code != "too_many_claims":
		return Unclear, "refused, but not by the claims limit (429 too_many_claims): " + a.String()
	case strings.TrimSpace(msg) == "" || !retryAfter(a):
		return Unclear, "429 too_many_claims without a message or a Retry-After of whole seconds: " + a.String()
	}
	return Clear, ""
}

// retryAfter reports whether a has a Retry-After of at least one second.
func retryAfter(a *Answer) bool {
	n, err := strconv.Atoi(strings.TrimSpace(a.Header.Get("Retry-After")))
	return err == nil && n >= 1
}
