// Package credwatch tells a long-lived notification stream of package mcp
// (the 2025-11-25 GET stream, 2026-07-28 subscriptions/listen) when the
// credential it was opened with stops being accepted: at its expiry, or
// once a revocation check the transport supplies says no. A [Watch] has a
// timer for the stream's select (at the expiry and, when the credential
// can be revoked, every keep-alive interval) and a check to run before
// each event; both answer with the JSON-RPC error that ends the stream.
//
// It imports the standard library and core/mcp/jsonrpc only, never mcp.
package credwatch
