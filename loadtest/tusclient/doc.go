// Package tusclient checks mcpblob's tus 1.0.0 endpoint (/v1/tus/) with a
// tus client written by others, in Go: github.com/bdragon300/tusgo
// (Apache-2.0), against `mcpblob serve` on the local store, on loopback.
// The upload is interrupted twice on its way — its connection cut by a
// proxy in the test, then the server SIGKILLed and restarted on the same
// data folder — and resumed each time from the offset the server reports,
// which must be at or past what it acknowledged and at most one chunk
// further; the stored blob must have the file's sha256.
//
// (The other tus clients the tests drive: tus-js-client in the cluster
// check, loadtest/cluster/tusjs.go; mcpblob put, cmd/mcpblob.) It lives in
// the loadtest module so tusgo never enters mcpblob's own module graph.
// `make tusclient-check` runs it (part of `make test`).
package tusclient
