// Package blobdecode turns an MCP server's base64 answers into raw bytes
// as they arrive, for the gateway: [Decode] streams the content of a
// resources/read answer into a writer (resources/stream for upstreams
// that only implement resources/read), and [Rewrite] copies a tools/call
// or resources/read answer through, offloading its large embedded values
// into sinks and linking them instead.
//
// [Decode] reads the upstream's HTTP response body (application/json, or
// text/event-stream with any number of notifications and server requests
// before the answer), finds the JSON-RPC answer, and streams the first
// entry of result.contents into a writer: a blob through the codec's
// streaming base64 decoder, a text unescaped as UTF-8. Nothing is held but
// fixed buffers (about 300 KiB in all, whatever the blob's size) and the
// small strings the protocol reads, each bounded by [Options].
//
// # What is accepted
//
// JSON as encoding/json reads it: any whitespace between tokens, any
// member order, every string escape (\/, \u002B, surrogate pairs; a lone
// surrogate and each invalid UTF-8 byte of a text become U+FFFD). A blob
// is decoded as encoding/base64.StdEncoding decodes the unescaped string:
// padded, CR and LF ignored (so a blob wrapped with "\n" escapes is fine),
// nothing else. For a valid answer the bytes written equal what
// encoding/json and encoding/base64 give for the same body (the fuzz
// targets check it).
//
// SSE as the specification parses it (CR, LF or CRLF line ends, "data:"
// with or without its space, several data lines joined by "\n",
// comments); events of another type than "message" and events with no
// data (priming events) are skipped; the answer's event counts only once
// its blank line arrived. Other messages before the answer are read,
// checked as JSON and dropped; those with a method are requests or
// notifications, any other is the answer (a JSON-RPC batch is refused).
//
// The answer is strict where it matters to a client: jsonrpc must be
// "2.0"; id, jsonrpc, method, result, error, result.contents and the
// first content's uri, mimeType and blob/text must each come at most once
// (encoding/json would silently keep the last, after the first was
// streamed); blob or text must be a string.
//
// Several contents: only the first entry of result.contents is streamed;
// the others are read, checked and skipped (counted in Result.More),
// within Options.MaxOtherBytes.
//
// # The media type
//
// mimeType may come before or after the blob. Options.Begin is called
// just before the first byte is written, with the Header known then: when
// mimeType came first its MimeType is set and the caller sets its
// Content-Type from it. When it comes after, Begin sees "" (the caller
// sends a generic type, and must: the blob cannot wait in memory), and
// the Result reports the late type with MimeTypeLate, so a cache can
// record it for the next download.
//
// # Freshness
//
// The Result's Freshness holds what the answer says about caching its
// content, wherever it comes: the result's ttlMs (a non-negative integer;
// anything else is no hint) and cacheScope, and the first content's
// annotations.lastModified and the sha256 of its _meta as sent.
//
// # Errors
//
// Every error is typed: [*RPCError] (the upstream answered with a
// JSON-RPC error: code and message to pass on), [*CorruptError] (the blob
// is not base64), [ErrTruncated] (the body ended early), [ErrNoContent]
// (no blob or text), [*IDError] (an answer to another request),
// [*FormatError] (not JSON, not JSON-RPC, not a ReadResourceResult,
// malformed SSE, another Content-Type), [*LimitError] (a line, string,
// nesting or byte bound), [*ReadError] (the body's read failed) and
// [*WriteError] (the destination failed: not the upstream's fault, see
// [Upstream]). An error can come after bytes were written (a blob that
// turns corrupt halfway, an id that comes after the result): the caller
// must then abort its response (no final chunk, a short Content-Length),
// so that nothing written looks like success. Decode writes nothing after
// it meets an error.
//
// # Offloading
//
// [Rewrite] reads one JSON-RPC message with the same reader and copies
// every byte it consumes to its writer, except the content items of
// result.content (tool results: image and audio data, embedded resource
// blobs) and result.contents (resources/read blobs): each is held while
// Rewrite decides, and one whose base64 value decodes to more than the
// threshold has that value decoded into a [Sink] as it arrives and is
// replaced by a resource_link built from the sink's [Link]. Items under
// the threshold come out byte for byte. What is held is bounded by the
// threshold and RewriteOptions.MaxHeldBytes, whatever the value's size.
// A value not base64 stays inline while it is under the threshold (the
// rewriter does not judge what it passes on) and is a [*CorruptError]
// over it; a sink's failure is a [*SinkError] (the gateway's, not the
// upstream's).
package blobdecode
