// Package scan reads one POSTed JSON-RPC message as it arrives, without
// holding its large strings, so memory stays flat whatever the message
// carries (docs/design.md, "Constant memory").
//
// The scanner rebuilds the message in memory except for strings longer than
// a small threshold, which never are held:
//
//   - a string the [Router] routes to a sink (an x-mcp-file tool argument
//     whose handler chose where its bytes go before they arrive) is decoded
//     as an RFC 2397 data URI straight into that sink;
//   - any other long string that starts with "data:" is decoded while it
//     arrives into an unlinked temporary file (a decoded spool), bounded by
//     the routed x-mcp-file maxSize when known, else by Options.MaxFileBytes;
//   - any other long string goes, unescaped, to an unlinked temporary file
//     (a raw spool) and counts against Options.MaxBodyBytes like held bytes.
//
// Strings are taken out only where they are payloads for a handler:
// params.arguments, params.inputResponses and result. A long string where
// the protocol reads the value itself (the id, the method, params.name, a
// _meta value…) is refused with a [MemberError] rather than read as "", and
// so is a member given twice in the message, params, params._meta or
// params.arguments (deeper objects keep the last one, as encoding/json).
// After a refusal the rest of the message is read with its long strings
// dropped (up to a limit), so the answer does not race a client still
// sending. A [File] taken out reports Diverted; a sink may refuse a value
// before its first byte with a [Refusal].
//
// This works whatever the key order: when params arrive before method, or
// arguments before name, nothing is known about the target yet and data
// URIs take the decoded-spool path. The rebuilt message carries "" in place
// of each diverted string; its [File] is found by JSON path
// ("/params/arguments/file", "/result/content/file"…).
//
// Decode once: while rebuilding, the scanner records where the members of
// the message object, of params, params._meta and params.arguments lie, so
// the protocol reads them as [Message] fields without decoding the message
// again. Literals are validated as they are copied, so a message the
// scanner accepts is valid JSON.
//
// Data URI problems (bad scheme, bad base64, too large, media type not
// accepted) do not fail the message: they are recorded in the File, the
// rest of the string is read and discarded (up to a drain limit), and the
// handler answers with an error naming the argument. The package knows no
// storage: a sink is anything that can be written and aborted.
package scan
