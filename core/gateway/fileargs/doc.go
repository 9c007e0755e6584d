// Package fileargs checks the file arguments of a tools/call body while
// it streams through the gateway to its upstream (docs/gateway.md, "File
// inputs"), holding none of it.
//
// A [Checker] is fed the body one chunk at a time, before the gateway
// forwards the chunk. A push JSON lexer (walk.go) follows only the path to
// params.name and params.arguments.{arg}; every other value is skipped, a
// string in bulk. The string of an argument the upstream's tools/list
// marks x-mcp-file ([ParsePage] reads the descriptors) has its JSON escapes
// undone and goes through core/codec's streaming data URI decoder, whose
// bytes are counted against maxSize and the first 512 sniffed, then
// dropped (check.go). The media type the data URI declares must match
// accept; so must content whose signature names a definite binary type
// (PNG, PDF, ZIP, audio, video, fonts…), whatever was declared. The first
// problem is a [*Refusal] from Feed: the chunk that showed it is not to be
// forwarded. A value that is not a data URI, or whose base64 is broken, is
// left to the upstream.
//
// A [Gate] is the body on its way upstream: it feeds each chunk to its
// Checker before handing it on. With [Gate.Deliver] (docs/gateway.md,
// "By-reference delivery"), an argument whose x-mcp-file says
// "delivery":"reference" is not forwarded: its data URI, checked the same
// way, is decoded into a [Store] while the rest of the body waits, its
// size and sha256 counted (reference.go), and the string is replaced by
// the stored file's link, its [Facts] in the query. A bad file is refused
// and its stored part aborted. A [Table] keeps the descriptors read from
// the upstream's tools/list, one listing at a time.
//
// With [Gate.Expand] (expand.go), the string of an inline file argument
// that is an mcp-file:// URI is withheld while it is read (at most 1 KiB),
// opened through an [Opener] (the caller's own uploaded file; a refusal
// carries docs/files.md's data.reason) and replaced by a data URI whose
// base64 core/codec encodes from the file 48 KiB at a time as the body is
// read: a splice at its offset of the rewritten body. Deliver then reads
// the body on, within its limit, so a URI is refused or opened before
// anything goes upstream. [AdvertiseUpload] adds transferModes
// ["inline","upload"] to a tools/list result's inline file arguments
// (modes.go).
//
// The lexer checks JSON structure only as far as following the path
// needs: the upstream judges the JSON. Arguments that come before
// params.name are not known to be files unless the tool's name came first
// from the Mcp-Name header.
//
// Elicitation forms (elicit*.go). [MarkAnswer] gives the upstream's
// elicitation/create form requests with x-mcp-file fields a carrier (its
// id in 2025-11-25, its inputRequests key in 2026-07-28): a token the
// gateway seals ([Carriers]) holding the original and the descriptors
// ([FormSpecs]). An [ElicitGate] walks the client's answer as it streams
// ([Elicit]: result.content, or params.inputResponses.{key}.content),
// puts the original back in the carrier's place padded to its length, and
// checks each file as a tool argument; the first problem is a
// [*FieldRefusal]. A content value met before the carrier (an id written
// last) is measured whole and judged when the carrier comes.
//
// An [IDScan] watches a request's bytes for its top-level id, which the
// TypeScript SDK clients write after params: after a refusal it reads the
// rest of the body to the id, so the refusal is answered for it. The gates
// count refusals (by surface) and files stored by reference through
// [Metrics].
package fileargs
