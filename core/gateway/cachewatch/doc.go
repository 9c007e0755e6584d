// Package cachewatch holds the gateway stream cache's watches over the
// upstream answers the gateway relays; the bytes pass unchanged through
// both.
//
// WatchUpdates reads the data lines of an SSE answer (a POST's or the GET
// stream) for notifications/resources/updated, each naming a URI whose
// entry the cache drops; it holds at most MaxWatchedLine bytes of a line.
//
// Watch reads resource versions off resources/list and resources/read
// answers, whole answers up to MaxScan bytes: a version (Of) is a content's
// or a listed resource's annotations.lastModified, or a sha256 of a
// content's _meta as sent; an answer that cannot name either key is not
// decoded. Table remembers the last version seen per
// principal and URI in fixed slots, so that a lookup can tell an entry
// stored with another version (Differs).
package cachewatch
