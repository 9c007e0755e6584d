// Package bodyrate is the minimum-rate rule for request bodies that both of
// core/mcp's transports apply (mcpblob's fasthttp front through
// core/server/pace, and core/mcp/mcphttp on net/http): the time a server
// waits for a body's bytes is a budget, so a client that trickles is cut
// off while one that keeps the average may pause for as long as it has
// banked (docs/security.md, "Limits").
package bodyrate
