package gateway

import (
	"io"
	"net/http"

	"github.com/mcpblob/mcpblob/core/gateway/cachewatch"
)

// watchUpdates returns the body of an upstream answer, for the stream
// cache: an SSE answer (a POST's or the GET stream) is read through a
// watch that drops principal's entry of every URI a
// notifications/resources/updated event names. The bytes pass unchanged.
func (g *Gateway) watchUpdates(principal string, resp *http.Response) io.ReadCloser {
	if g.cache == nil {
		return resp.Body
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		return resp.Body
	}
	return cachewatch.WatchUpdates(resp.Body, func(uri string) { g.invalidate(principal, uri) })
}
