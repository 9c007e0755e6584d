// Package resstream holds the wire pieces of resources/stream (SEP-2532, a
// proposal; docs/byte-plane.md) that need no server: the [Answer] a resource
// handler gives, the client's resourceStreaming capability ([Capability])
// and the server's resources.stream one ([AddCapability]), the errors of
// the method ([NotSupported], [TooLarge]), the header naming the canonical
// URI, and the [BodySender] extension a transport offers for raw bytes.
//
// [Check] holds every handler's answer to what the client allows, so no
// handler has to: over the client's maxStreamSize it is refused, a body is
// cut at its declared Size, and a body of unknown size fails past
// maxStreamSize. A body that is a file ([FileBody], or an *os.File) is
// found under the server's wrappers by [BodyFile], for sendfile.
//
// The server offers the resources.stream capability only to clients that
// declared resourceStreaming (2025-11-25: in initialize; 2026-07-28: in the
// request's clientCapabilities). A handler answers with the raw bytes (sent
// directly, with sendfile when the transport can), a redirect, or a
// downloadUrl.
//
// Errors are JSON-RPC errors in the era's codes: resource not found is
// -32002 in 2025-11-25 and -32602 (data.uri) in 2026-07-28; "stream not
// supported" is -32003 and "too large" (over the client's maxStreamSize)
// -32004 in both, which 2026-07-28 allows as implementation-defined codes
// (-32000…-32019). A 2026-07-28 client without the capability gets -32021
// (HTTP 400); a 2025-11-25 one gets -32003. docs/byte-plane.md has the
// full table.
//
// Serving the method (finding the handler, the era's not-found error,
// writing the answer on the transport) stays in package mcp, which imports
// this package; resstream imports the standard library and
// core/mcp/jsonrpc only, never mcp.
package resstream
