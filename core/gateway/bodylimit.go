package gateway

import (
	"net/http"
	"strconv"
)

// kindBodyLimit is an upstream that refused a request body as too large.
const kindBodyLimit = "body_limit"

// bodyRefused is the error for an upstream that answered 413 to a request
// body: its own body limit, not the gateway's, is below the body's size.
// The official TypeScript, Python and Go SDKs refuse bodies over 4 MiB by
// default; the client learns which limit it hit instead of the
// upstream's bare 413 page. The answer is closed unread, so its connection
// is not reused: the upstream left the rest of the body unread on it (a
// Node upstream then resets the next request sent there).
func bodyRefused(body *clientBody, resp *http.Response) *upstreamError {
	resp.Body.Close()
	body.mu.Lock()
	size, sent := body.size, body.sent
	body.mu.Unlock()
	what := "a request body of " + strconv.FormatInt(size, 10) + " bytes"
	if size < 0 {
		what = "a request body of at least " + strconv.FormatInt(sent, 10) + " bytes"
	}
	return &upstreamError{kind: kindBodyLimit, status: http.StatusRequestEntityTooLarge,
		msg: "the upstream refused " + what + " as too large (HTTP 413): its body limit is lower " +
			"(the official TypeScript, Python and Go SDKs accept 4 MiB by default): raise the upstream's body limit"}
}
