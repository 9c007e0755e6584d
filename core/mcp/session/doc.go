// Package session holds the node-local [State] of one 2025-11-25 session
// of package mcp: its log level and resource subscriptions (each charged
// to its principal's [Budget] until unsubscribed or the state is closed),
// the claim on its one standalone GET stream, the server-to-client
// requests waiting for the client's answer, the client's requests in
// flight and their cancellation (notifications/cancelled), and its
// resumable SSE streams.
//
// A [Table] holds one node's states, each charged to its principal in a
// core/budget pool; at the pool's bound it evicts the least recently used
// idle session (no GET stream, no request in flight) of the principal or
// of the node, or refuses the new one. It remembers ended ids compactly
// ([Revoked]). A Table closes every state it drops on its own (expired,
// idle); the caller of [Table.Revoke], and of Add or Get for the states
// they evicted, closes those.
//
// Minting, verifying, rebuilding and revoking session ids, ending evicted
// sessions in the shared record, and serving the GET stream, stay in
// package mcp, which imports this package; session imports the standard
// library, core/budget, core/mcp/jsonrpc and core/mcp/sse only, never mcp.
package session
