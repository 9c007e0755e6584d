package gate

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/budget"
)

// The byte plane's claims (a single-use link redeemed, an upload id taken)
// are objects in the shared store that live until their token expires. Each
// is charged, before it is written, to the principal the token was minted
// for against the claims rate core/mcp keeps (ClaimsPerMinute of
// core/mcp/limits' Limits, shared with the claims of the MCP endpoint):
// over it the request is refused 429 with Retry-After, nothing is written
// and the link stays usable (onetime.Facts.ClaimToken). The blob service's
// routes answer so.

// RefuseClaimRate answers a claim refused by the claims rate: 429 with
// Retry-After (the seconds left in the principal's minute) and the error
// too_many_claims. It reports whether err was such a refusal.
func RefuseClaimRate(ctx *fasthttp.RequestCtx, err error) bool {
	var e *budget.Exceeded
	if !errors.As(err, &e) {
		return false
	}
	secs := max(int64((e.RetryAfter+time.Second-1)/time.Second), 1)
	ctx.Response.Header.Set("Retry-After", strconv.FormatInt(secs, 10))
	APIError(ctx, http.StatusTooManyRequests, "too_many_claims",
		"too many single-use downloads and upload starts for this principal: at most "+
			strconv.FormatInt(e.Max, 10)+" a minute; retry in "+strconv.FormatInt(secs, 10)+" s")
	return true
}
