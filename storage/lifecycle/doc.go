// Package lifecycle gives blobs an end: an expiry of their own
// (storage.CreateOptions.Expires, from a client's ttlSeconds, which
// ParseTTL and CheckTTL check) and prefix rules of the configuration
// (Rule, ParseRules: "uploads/=7d"), as S3 lifecycle rules do.
//
// [Wrap] is the one place where expiry takes effect for readers: it wraps
// the server's store so that an expired blob is gone at once for Stat,
// Open and List, whatever the surface above (tools, resources, links,
// /v1, streams). A [Sweeper] then deletes expired blobs: a bounded amount
// per round, one node per round across a cluster (a claim per round in
// the store, storage.Claimer), through the server's own delete path.
//
// docs/lifecycle.md is the operator's account.
package lifecycle
