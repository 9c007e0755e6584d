// Package offload moves large embedded blobs out of an upstream's answers
// for the gateway (`mcpblob serve --upstream URL --offload-over SIZE`): an
// embedded base64 blob over Options.Over decoded bytes in a tools/call
// answer is decoded into a [Store] as it arrives (blobdecode.Rewrite) and
// its content item replaced by a resource_link to URIPrefix + id, which
// the gateway itself answers (resources/read: the blob as base64 streamed
// from the store, [ReadAnswer]; resources/stream: the store's link).
//
// [Offloader.Rewrite] gives the options of one answer's rewrite and the
// record of the blobs it stored ([Stored]), so that an answer that fails
// leaves none behind. [SSE] rewrites an SSE answer event by event: the
// data of an event that is a JSON object goes through blobdecode.Rewrite,
// held up to a bound so that a broken blob is a clean error event; every
// other line passes byte for byte. [Classify] names a failed rewrite in
// the gateway's terms, a store's refusal by a quota included ([QuotaOf]). The gateway (package gateway) does the HTTP: it
// picks the answers to rewrite and answers the reads of offloaded URIs.
package offload
