package gateway

import (
	"io"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/cachewatch"
)

// How fresh a stream cache entry is.
//
// Its lifetime is the TTL (--stream-cache-ttl), shortened to the ttlMs of
// the 2026-07-28 resources/read answer that stored it; ttlMs 0 stores
// nothing. A 2025-11-25 answer's ttlMs is not read: the member is not in
// that version, and go-sdk v1.8.0 sends "ttlMs":0 in every answer, of
// either era. cacheScope needs nothing more: every entry already belongs
// to one principal, which is what "private" asks, and "public" is kept
// per principal too.
//
// Its version (package cachewatch) is recorded with it. The relay looks at
// the resources/list and resources/read answers it passes and remembers,
// per principal and URI, the last version each showed; a lookup that
// finds an entry stored with another version of the same kind drops it.
// The memory is this node's only, in a fixed table: another node, or a
// version pushed out of the table, is not known, and then the TTL and
// notifications/resources/updated are what bound staleness.

const methodList = "resources/list"

// facts are the facts of an entry whose download began at began.
func (sc *streamCache) facts(began time.Time, fr Freshness) CacheFacts {
	ttl := sc.opts.TTL
	if fr.TTLGiven {
		ttl = min(ttl, time.Duration(fr.TTLMs)*time.Millisecond)
	}
	return CacheFacts{Expires: began.Add(ttl), Version: cachewatch.Of(fr.LastModified, fr.MetaSHA256)}
}

// stale reports an entry past its lifetime, or stored with another
// version than the last one seen for k.
func (sc *streamCache) stale(k CacheKey, info CacheInfo) bool {
	expires := info.Stored.Add(sc.opts.TTL)
	if !info.Expires.IsZero() && info.Expires.Before(expires) {
		expires = info.Expires
	}
	if time.Now().After(expires) {
		return true
	}
	seen, _ := sc.versions.Get(sc.hash(k.Principal, k.URI))
	return cachewatch.Differs(seen, info.Version)
}

// watchVersions returns the body of an upstream answer to method, for the
// stream cache: the versions a resources/list or resources/read answer
// shows are remembered for principal. The bytes pass unchanged.
func (g *Gateway) watchVersions(principal, method string, resp *http.Response) io.ReadCloser {
	if g.cache == nil || (method != methodList && method != methodRead) || resp.StatusCode != http.StatusOK {
		return resp.Body
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "text/event-stream" {
		return resp.Body
	}
	return cachewatch.Watch(resp.Body, mt == "text/event-stream", func(uri, version string) {
		g.cache.versions.Set(g.cache.hash(principal, uri), version)
	})
}
