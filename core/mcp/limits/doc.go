// Package limits bounds the protocol state clients can make one node of
// package mcp hold, per principal and per node (docs/security.md,
// "Protocol state"): the [Limits] an embedder sets in mcp.Options.Limits
// and their defaults, the server's [Pools] of that state (core/budget
// pools and the claims rate), and [Refusal], the JSON-RPC answer to a
// request one of them refused (code [CodeLimitExceeded], HTTP 429 when the
// principal's own bound was met, 503 when the node's, with Retry-After).
//
// What each pool is charged with, and when it is given back, stays with
// the code that holds the state (package mcp and package session). limits
// imports the standard library, core/budget and core/mcp/jsonrpc only,
// never mcp.
package limits
