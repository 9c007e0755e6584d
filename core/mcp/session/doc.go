// Package session holds the node-local [State] of one 2025-11-25 session
// of package mcp: its log level and resource subscriptions (each charged
// to its principal's [Budget] until unsubscribed or the state is closed),
// the claim on its one standalone GET stream, the server-to-client
// requests waiting for the client's answer, the client's requests in
// flight and their cancellation (notifications/cancelled), and its
// resumable SSE streams.
//
// Minting, verifying, rebuilding and revoking session ids, and serving the
// GET stream, stay in package mcp, which imports this package; session
// imports the standard library, core/budget, core/mcp/jsonrpc and
// core/mcp/sse only, never mcp. A [Table] closes every state it drops
// (expired, idle); the caller of [Table.Revoke] closes the state revoked.
package session
