package gate

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/storage"
)

// TTLHeader carries a PUT's ttlSeconds, as the query parameter ttlSeconds
// does (docs/lifecycle.md).
const TTLHeader = "X-Mcp-Ttl-Seconds"

// PutExpiry reads a blob's expiry from the ttlSeconds query parameter or
// the x-mcp-ttl-seconds header (both given: they must agree), counted from
// now; zero without either. A bad value is refused (400 invalid_ttl, the
// message naming ttlSeconds, the body drained) and ok is false.
func (g *Gate) PutExpiry(ctx *fasthttp.RequestCtx, now time.Time) (expires time.Time, ok bool) {
	q, h := ctx.QueryArgs().Peek("ttlSeconds"), ctx.Request.Header.Peek(TTLHeader)
	v := q
	switch {
	case q == nil && h == nil:
		return time.Time{}, true
	case q == nil:
		v = h
	case h != nil && string(h) != string(q):
		g.RefuseBody(ctx, http.StatusBadRequest, "invalid_ttl", "ttlSeconds: the query parameter and the x-mcp-ttl-seconds header differ")
		return time.Time{}, false
	}
	ttl, err := storage.ParseTTL(string(v))
	if err != nil {
		g.RefuseBody(ctx, http.StatusBadRequest, "invalid_ttl", err.Error())
		return time.Time{}, false
	}
	return storage.Expiry(now, ttl), true
}

// BlobTTLField reads a JSON request's blobTtlSeconds (the stored blob's
// ttlSeconds): 0 (none) when absent or null, else a whole number from 1
// to storage.MaxTTLSeconds, digits only; anything else is answered 400
// invalid_ttl naming it, and ok is false. It does nothing and reports
// false when ok is false on entry (an earlier field was refused and
// answered), so one refusal answers.
func BlobTTLField(ctx *fasthttp.RequestCtx, ok bool, raw json.RawMessage) (time.Duration, bool) {
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return 0, ok
	}
	ttl, err := storage.ParseTTL(string(raw))
	if err != nil {
		APIError(ctx, http.StatusBadRequest, "invalid_ttl",
			fmt.Sprintf("blobTtlSeconds must be an integer in [1, %d]", storage.MaxTTLSeconds))
		return 0, false
	}
	return ttl, true
}

// ExpiresField is an expiry as the blob objects of the control API show
// it (RFC 3339), "" for none.
func ExpiresField(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
