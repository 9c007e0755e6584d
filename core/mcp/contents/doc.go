// Package contents writes the streamed contents of a resources/read
// result (DESIGN.md data flow 1): a [Body] is the result's JSON around
// contents read from a reader, encoded as they go out, as base64 (SIMD,
// package codec) or as JSON-escaped text, in fixed pooled chunks, so memory
// stays flat whatever the size, and with its exact length known before the
// first byte (Content-Length, or one SSE data line). [ScanText] is the
// first pass that makes a text body's escaped length known.
//
// It imports the standard library, core/codec and core/mcp/scan (for JSON
// escaping) only. Package mcp imports it (it builds a Body in
// resources/read and writes it), never the reverse.
package contents
