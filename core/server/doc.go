// Package server is mcpblob's HTTP front: the only package that imports
// fasthttp. It serves the MCP endpoint (/mcp, POST/GET/DELETE, both protocol
// eras, implemented transport-agnostically by core/mcp) and the operations
// endpoints /healthz and /readyz, and owns everything HTTP-shaped around
// them: DNS-rebinding protection (Host and Origin checked before any body is
// parsed), bearer API keys, request size and header limits, timeouts with
// per-chunk write deadlines (so multi-gigabyte responses and long SSE streams
// survive while slow readers do not hold connections forever), and graceful
// shutdown (readiness off, drain delay, then a bounded grace period).
//
// Large responses stream: core/mcp hands over a writer and, for JSON, the
// exact length, and the adapter gives fasthttp a body stream that implements
// [fasthttp.BodyWriterTo], so bytes go from storage to the socket without a
// pipe or an extra copy; SSE events are flushed one by one.
package server
