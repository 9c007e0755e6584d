// Package sse writes the Server-Sent Events of package mcp's Streamable
// HTTP responses: a [Writer] frames JSON-RPC messages as "message" events
// on one connection (each event one write and one flush, keep-alive
// comments to detect a client that left), and a [Stream] is a resumable
// stream of a 2025-11-25 session (SEP-1699): a priming event, per-event
// ids, a bounded replay buffer, and reconnection with Last-Event-ID through
// the session's [Streams] registry.
//
// It knows neither sessions nor servers: a stream is given the server's
// base context and the session's done channel, and a streamed result body
// is a func(io.Writer) error. It imports the standard library only;
// package mcp imports it, never the reverse.
package sse
