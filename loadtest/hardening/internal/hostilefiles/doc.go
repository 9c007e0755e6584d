// Package hostilefiles is the files/* class of `make hardening`: hostile
// params for every SEP-2631 method (docs/files.md) and mcp-file URIs in
// tool arguments, as [hostile.Case]s on the [hostile.Files] row, in
// 2026-07-28 with the files capability declared. Each input must get a
// JSON-RPC error with the code and data.reason of docs/files.md's table
// (or, in a tool argument, an isError result), never -32603 or a 5xx for
// the client's fault; and no answer to alice may name bob's file (its
// name, URI or digest). A small client (client.go) prepares the files the
// inputs hit: alice's uploaded one, and bob's.
package hostilefiles
