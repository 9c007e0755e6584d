// Package mcp implements the Model Context Protocol endpoint of mcpblob:
// JSON-RPC 2.0 messages and errors, a method router, and both protocol eras
// on one endpoint (SPEC.md §0–6):
//
//   - 2025-11-25 (also accepting 2025-06-18 and 2025-03-26 clients):
//     initialize and signed Mcp-Session-Id sessions, JSON or SSE responses,
//     the standalone GET stream, DELETE, ping, logging/setLevel, progress,
//     cancellation, completion, resource subscriptions, and server-to-client
//     requests (sampling, elicitation) on the originating request's SSE
//     stream;
//   - 2026-07-28 (stateless): server/discover, per-request _meta,
//     MCP-Protocol-Version / Mcp-Method / Mcp-Name / Mcp-Param-* header checks
//     including the =?base64?…?= form, resultType, ttlMs/cacheScope,
//     subscriptions/listen, multi round-trip requests with a signed
//     requestState, and the era's error codes (-32020/-32021/-32022, 404 with
//     -32601, resource-not-found as -32602).
//
// With task-supporting tools registered (today only the conformance
// fixtures) the 2026-07-28 era also offers the io.modelcontextprotocol/tasks
// extension (SEP-2663, tasks.go): CreateTaskResult, tasks/get, tasks/update
// and tasks/cancel, with tasks kept in process memory.
//
// 2025-11-25 SSE responses are resumable (SEP-1699, resume.go): priming
// event, event ids, replay on GET with Last-Event-ID; a dropped connection
// is not a cancellation.
//
// Not implemented: 2025-03-26 JSON-RPC batches (rejected with -32600).
//
// An initialize request selects the 2025-11-25 semantics; a request whose
// params._meta carries io.modelcontextprotocol/protocolVersion (or that
// sends a non-legacy MCP-Protocol-Version without a session) selects
// 2026-07-28.
//
// The package is transport-agnostic: [Server.ServeHTTP] takes an HTTP-shaped
// [Request] (method, header lookup, body reader, authenticated principal)
// and writes to a [ResponseWriter] (status, headers, and either a complete
// body or a body stream with a known or unknown length and a Flush for SSE).
// core/server adapts fasthttp to it; this package imports neither fasthttp
// nor minio-go.
//
// Blobs are exposed as resources blob:///{key} (template blob:///{+key}) and
// through the tools list_blobs, stat_blob, delete_blob and get_download_link.
// A resources/read of a blob is never built in memory: the JSON envelope is
// hand-written around the object's bytes, which stream from storage through
// core/codec base64 in fixed-size chunks, so the exact Content-Length
// (prefix + 4·⌈n/3⌉ + suffix) is known before the first byte and the same
// message is a single data: line over SSE. Text media types that are valid
// UTF-8 (up to Options.MaxTextBytes) are served as text, JSON-escaped in
// chunks after a counting pass; see [Server] for the rule. encoding/json is
// only used for small messages.
//
// resources/stream (SEP-2532, a proposal; resstream.go) sends a blob's raw
// bytes: directly (the transport may implement [BodySender] to use
// sendfile), as a 302 to a presigned URL, or as a signed downloadUrl, per
// Options.StreamMode. It is offered (resources.stream) and answered only
// for clients that declared resourceStreaming, with each era's error codes
// (docs/byte-plane.md). get_download_link (links.go) mints the same signed
// /d/{token} links.
//
// File inputs (reader.go, spool.go, uploads.go; DESIGN.md data flows 3–5):
// a POSTed message is scanned, not unmarshalled. A data URI given to an
// x-mcp-file argument (SEP-2356) is decoded while it arrives — JSON escapes
// undone as the asm scanner finds quotes and backslashes — straight into
// storage.Create when the key is already known, else into an unlinked
// temporary file, with maxSize enforced as bytes arrive; any other large
// string is spooled, never held, whatever the key order. upload_file checks
// scheme, form, accept and content (magic bytes) and commits or aborts, so
// nothing is stored on failure; isError texts name the argument and the
// constraint, and never carry the payload. request_upload elicits a file in
// binary mode (SEP-1306: upload endpoints served by core/server), form mode
// (an x-mcp-file field) or URL mode (the upload page), over the call's SSE
// stream in 2025-11-25 and by InputRequiredResult with a signed requestState
// in 2026-07-28, and verifies the answer against storage.
//
// Changes made through the server (delete_blob, uploads) are
// published on a [Hub] and reach 2025-11-25 GET streams (resources/updated
// for subscribed URIs, list_changed) and 2026-07-28 listen streams.
//
// Options.ConformanceFixtures adds the official conformance suite's fixture
// tools, resources and prompts (fixtures.go); without it the production
// surface is only the blob resources and tools.
package mcp
