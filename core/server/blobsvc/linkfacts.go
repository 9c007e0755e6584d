package blobsvc

import (
	"net/http"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// A download link may state its blob's facts in its query: name, type,
// size, sha256 (the links the gateway gives its upstream for a file it
// delivers by reference, docs/gateway.md). The token's seal does not cover
// the query, so the link serves only when every fact stated is the
// blob's: a query altered after minting is refused.

// linkFactsHold reports whether the facts args states are info's, the
// blob of link c (a fact not stated holds).
func linkFactsHold(args *fasthttp.Args, c token.Claims, info storage.Info) bool {
	name := c.Filename
	if name == "" {
		name = blobs.DownloadName(info)
	}
	holds := func(key, want string) bool {
		v := args.Peek(key)
		return v == nil || string(v) == want
	}
	return holds("name", name) && holds("type", mediaTypeOf(info)) &&
		holds("size", strconv.FormatInt(info.Size, 10)) && (info.SHA256 == "" || holds("sha256", info.SHA256))
}

// refuseLinkFacts answers a link whose query states facts that are not
// its blob's.
func refuseLinkFacts(ctx *fasthttp.RequestCtx) {
	gate.APIError(ctx, http.StatusBadRequest, "bad_request",
		"the link's query (name, type, size, sha256) does not match its blob; use the link as it was given")
}
