// Package front is mcpblob's HTTP front: the fasthttp server and its
// routing. It serves the MCP endpoint (/mcp, POST/GET/DELETE, both
// protocol eras, implemented transport-agnostically by core/mcp) and the
// front's own routes (/, /healthz, /readyz, /metrics on an open loopback
// node, the protected resource metadata), and hands every other route to
// its Service (in mcpblob, package blobsvc), which it knows only by that
// interface.
//
// It owns everything HTTP-shaped around those routes: requests whose body
// framing another parser could read differently refused first (framing.go,
// package framing), the download origin's split (origin.go), Expect:
// 100-continue answered only after the route's checks before the body
// (expect.go), timeouts with per-chunk write deadlines (so multi-gigabyte
// responses and long SSE streams survive while slow readers do not hold
// connections forever), connection caps (package connlimit), telemetry
// (observe.go; the admin listener, package admin, elsewhere), and graceful
// shutdown (readiness off, drain delay, then a bounded grace period). The
// per-request rules it shares with the service (Host and Origin, the
// caller, upload slots and the body rate rule, error bodies) are package
// gate's.
//
// The path of an /mcp request is one line: handle (front.go) → serveMCP
// (mcp.go: the gate's admission, with the body; core/mcp; the admission's
// Close) → the response adapters (mcp.go, response.go). Large responses stream: core/mcp hands over a writer and,
// for JSON, the exact length, and the adapter gives fasthttp a body stream
// that implements [fasthttp.BodyWriterTo], so bytes go from storage to the
// socket without a pipe or an extra copy; SSE events are flushed one by
// one.
package front
