// Package gateway puts mcpblob in front of another MCP server (the
// upstream, Streamable HTTP): `mcpblob serve --upstream URL`. It is
// transport-neutral: a server transport hands it a [Request] and a
// [ResponseWriter] (mcpblob's fasthttp front does, in
// core/server/front/gateway.go); toward the upstream it is an HTTP/1.1
// client (package h1: kept-alive connections, no goroutine of its own for
// a request whose body is in memory).
//
// Pass-through. Every request to the MCP endpoint (POST, the GET stream,
// DELETE, both protocol eras) goes to the upstream as the client sends it:
// the body streams as it arrives, never held, and the answer (JSON with its
// length, or SSE flushed at every read, an open event stream's status and
// headers at once, with its first event when that comes within a
// millisecond, and with its length when the answer ends there) streams
// back as the upstream writes it; an answer the transport already holds
// whole (a small one, as go-sdk's server sends) is handed over as one body
// of known length. The gateway keeps no session state: Mcp-Session-Id, Last-Event-ID,
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and every other header pass
// unchanged, so gateway nodes scale behind a load balancer like the
// upstream itself. Bytes the gateway does not change arrive byte for
// byte; while an SSE answer is silent between events for
// Options.KeepAlive, the gateway adds a comment line (keepalive.go). A
// client that goes away ends the upstream call (its context) at the next
// write that fails, so within KeepAlive.
//
// What the gateway reads: the JSON-RPC method of a POST, from Mcp-Method
// when the era sends it, else from a bounded look at the body's top-level
// members (package wire; a method beyond Options.PeekBytes is relayed without a
// look). Three methods are read whole (bounded by Options.MaxSmallBody):
//
//   - initialize and server/discover: when the client declared
//     resourceStreaming (SEP-2532) and the upstream declares resources but
//     not resources.stream, the answer's capabilities gain
//     resources.stream (capability.go); only that message is rewritten,
//     within Options.MaxRewriteBytes, in a JSON or an SSE answer.
//   - resources/stream: relayed when the upstream offers it (as this node
//     learnt from the answers it relayed); otherwise answered by the
//     gateway with a sealed, short-lived downloadUrl bound to the
//     principal, the upstream session and the URI (stream.go), whose GET
//     ([Gateway.ServeDownload], download.go) runs the upstream's
//     resources/read and streams its decoded bytes through a [Decoder].
//
// Offloading (Options.Offload; package offload, offload*.go). With
// Offload.Over set, the answers to tools/call go through blobdecode.Rewrite:
// an embedded base64 blob over Over bytes is decoded into the
// OffloadStore as it arrives and its content item replaced by a
// resource_link to mcpblob:///offload/{id}, whose resources/read (base64
// streamed from the store) and resources/stream (the store's link) the
// gateway answers itself, for the principal that caused the offload only.
// The rewritten answer is held up to MaxRewriteBytes, so that a broken
// blob is a clean JSON-RPC error (an error event in an SSE stream) and
// leaves nothing stored. A blob the store refuses by the caller's quota
// (an error with a QuotaExceeded method in its chain, as storage's
// QuotaError: offload.QuotaOf) is the client's limit: -32602 with
// data.reason "quotaExceeded" and the figures, logged at INFO; so is a
// file delivered by reference.
//
// Stream cache (Options.Cache; cache*.go). A downloadUrl GET that reads
// the upstream tees the decoded bytes into the CacheStore as the client
// takes them, committed only when the answer decoded cleanly, per
// principal, upstream and URI; a later downloadUrl GET of the same key
// within its life (Cache.TTL, capped by a 2026-07-28 answer's ttlMs;
// ttlMs 0 stores nothing) is a 302 to the store's link, without the
// upstream. A notifications/resources/updated in an SSE answer the gateway
// relays drops that principal's entry of the URI (and keeps a download in
// flight from storing it); a relayed resources/list or resources/read
// showing another version of it (lastModified, _meta) drops it at its next
// lookup on this node (package cachewatch).
//
// File inputs (fileargs*.go, package fileargs). A tools/call body streams
// to the upstream through a gate that walks each chunk before forwarding
// it: the data URI of every argument the upstream's tools/list marks
// x-mcp-file is decoded only to count its bytes and sniff its type, and a
// file over maxSize or not matching accept stops the body there (the
// upstream request is cut, never whole) and is answered -32602 naming the
// argument. The descriptors come from a tools/list the gateway runs itself
// for a tool it has no entry for (Options.FileSpecTTL), so every node
// checks the same; an elicitation form's file fields, by a sealed carrier
// (elicit.go). An upstream's 413 to a body is answered as its body limit
// (bodylimit.go). An argument the upstream marks "delivery": "reference" is
// decoded into Options.Files.Store instead, and the upstream gets a signed,
// expiring link to it (fileargs_ref.go). With Options.Files.Opener, the
// gateway's tools/list answers advertise transferModes ["inline","upload"]
// on the upstream's inline file arguments, and the mcp-file:// URI of a
// file the caller uploaded to the gateway (SEP-2631) is replaced, as the
// body streams, by a data URI encoded from the store (fileargs_expand.go,
// fileargs_modes.go); a URI refused is answered -32602 with data.reason
// before anything goes upstream.
//
// Identity. The transport authenticated the client; the client's
// Authorization (and cookies, Origin, any principal header it made up)
// never reach the upstream. The gateway sends its own credential
// (Options.Token) and the principal, signed (package principal) or plain
// on a trusted network.
//
// Errors. An upstream that cannot be reached, times out, refuses the
// gateway's credential, answers 5xx or not MCP, or sends an answer over
// the gateway's bounds is answered as a JSON-RPC error (-32603, data.upstream
// naming the kind) with 502 or 504, logged once at WARN (ERROR for a
// refused credential) without secrets. Memory stays flat whatever the
// upstream sends: relayed bodies go through pooled 32 KiB buffers (two for SSE), the
// few read whole are bounded, response headers are bounded by the
// transport (Options.MaxResponseHeaderBytes).
package gateway
