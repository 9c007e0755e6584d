// Package mcp is a Model Context Protocol server core for large files: the
// protocol (JSON-RPC 2.0, both eras on one endpoint, sessions, SSE and
// resumability, multi round-trip requests, tasks, subscriptions) with a
// public registration API, and streaming where the official SDKs buffer.
//
// A program builds a [Server] with [NewServer], registers what it offers —
// [Server.AddTool], [Server.AddResource], [Server.AddResourceTemplate],
// [Server.AddPrompt], [Server.AddMethod]; [AddTypedTool] decodes a tool's arguments into a struct
// checked against its schema — and hands HTTP requests to [Server.ServeMCP]
// (package mcphttp does so on net/http, core/server over fasthttp). Two things are first-class for any
// registered tool or resource:
//
//   - file inputs (SEP-2356): a tool argument whose schema property carries
//     "x-mcp-file" reaches the handler as a [File] decoded while it arrives
//     (package scan; a refusal is a [FileError]), with maxSize and accept enforced as bytes arrive and
//     memory flat whatever its size; a [FileSink] may choose where the
//     bytes go before they arrive, else they are spooled. File fields of a
//     form elicitation ([Elicit]) are handled the same way in both eras,
//     and so are SEP-2631 file URIs ([Options.OpenFileURI]);
//   - streamed resource contents: a [ResourceHandler] may answer
//     resources/read with a Body of known size, written base64-in-JSON with
//     an exact Content-Length and flat memory, and resources/stream
//     (SEP-2532) with the raw bytes, a redirect or a link.
//
// Eras (docs/protocol.md): an initialize request selects 2025-11-25 (also
// accepting 2025-06-18 and 2025-03-26 clients): signed Mcp-Session-Id
// sessions (bounded per principal and per node, [limits.Limits]; live in a record
// every node asks, [Options.LiveSessions], when set), JSON or SSE
// responses, the standalone GET stream, DELETE, logging, progress,
// cancellation, completion, subscriptions, and server-to-client requests
// on the call's SSE stream, resumable with Last-Event-ID (SEP-1699). A request whose params._meta carries
// io.modelcontextprotocol/protocolVersion (or a non-legacy
// MCP-Protocol-Version header without a session) selects the stateless
// 2026-07-28: server/discover, Mcp-Method / Mcp-Name / Mcp-Param-* header
// checks, resultType, cache hints, subscriptions/listen, and multi
// round-trip requests with a signed requestState that binds the principal,
// the request and its arguments. [Call.Input] hides the difference: a
// handler asks the client for input the same way in both eras. Tools that
// support tasks enable the io.modelcontextprotocol/tasks extension
// ([Call.RunAsTask]). Not implemented: 2025-03-26 JSON-RPC batches.
//
// Protocol state one principal can make a node hold is bounded per
// principal and per node ([limits.Limits]); a wait for the client's answer (a
// server-to-client request, a task's input round, [Call.HoldPending])
// counts against the pending budget, while MRTR rounds hold nothing
// between rounds. Notification streams end with the credential that
// opened them ([Request].CredentialExpires, CredentialValid).
//
// The package knows no storage and no blob: mcpblob's own tools and
// resources (package core/blobs) and the conformance fixtures (package
// core/conformance) are registered through the same API. It imports
// neither fasthttp nor minio-go; a message is scanned once (package scan),
// and the members the router needs are read from the scan, not decoded
// again.
//
// Parts with a job of their own live in subpackages, which this package
// imports and which never import it: scan (the streaming request scanner),
// jsonrpc (error codes, message parsing, wire builders; [Error] and the
// Code constants are re-exported here), headers (the Streamable HTTP header
// rules: Accept, SEP-2243 checks), sse (the SSE writer and SEP-1699
// resumable streams), session (a 2025-11-25 session's node-local state),
// mrtr (the signed MRTR requestState), tasks (the tasks extension's task
// store), contents (the streamed resources/read body; [ScanText]), events
// (the change-event [Hub], re-exported here), credwatch (when a
// notification stream's credential ends) and toolargs (typed tools'
// argument checks and decoding).
package mcp
