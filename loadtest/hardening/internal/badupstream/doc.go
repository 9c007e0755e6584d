// Package badupstream is the hardening run's hostile MCP upstream: a
// loopback HTTP server for `mcpblob serve --upstream` that answers each
// call the way the call's name asks, from well-behaved to hostile. The
// name is a tools/call's tool name, or the part after "bad://" of a
// resources/read URI (what the gateway's downloadUrl GET sends);
// initialize and server/discover get a plain answer declaring tools and
// resources (not resources/stream, so the gateway mints its own
// downloadUrls).
//
// Each answer is written by hand on the connection, so it can be what
// net/http would never send: endless headers, an endless SSE line, a body
// that ends before its Content-Length (or claims 2 GiB), a slow drip, an
// answer that is not HTTP. The behaviours are listed in [Behaviours].
//
// The server records the Authorization and Mcp-Gateway-Principal values
// the gateway sent (the client's own key must never be among them) and
// whether the gateway followed a redirect it was given.
package badupstream
