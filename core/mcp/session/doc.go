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
// A [Lifecycle] is one node's sessions end to end: it reads initialize's
// protocol version and keeps the client capabilities the server reads
// (package clientcaps, within a bound), mints signed session ids
// (core/token) and holds their states in its Table, verifies an id on
// each request, rebuilds the state of a valid id this node does not hold,
// ends a session on DELETE and the sessions the Table evicted,
// and, with a [LiveSessions], keeps the shared record of live sessions
// every node asks (each record begun charged to the principal's claims
// rate). Its errors are the protocol's answers (404 [NotFound], 503 when
// the record fails, the refusals of package limits).
//
// [State.ServeGetStream] serves a session's standalone GET stream: its
// server-to-client messages and the notifications the change events make
// (package events), ending with the credential that opened it (package
// credwatch). [Expectations] holds the x-mcp-file fields of the form
// elicitations sessions have in flight, which bound their answers as they
// arrive. Answering the GET itself stays in package mcp, which imports
// this package; session imports the standard library, core/budget,
// core/token, core/mcp/clientcaps, core/mcp/credwatch, core/mcp/events,
// core/mcp/jsonrpc, core/mcp/limits, core/mcp/scan and core/mcp/sse only,
// never mcp.
package session
