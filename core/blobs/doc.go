// Package blobs is mcpblob's blob application: stored objects exposed over
// MCP, registered on a protocol server ([mcp.Server]) through its public
// API only, exactly as any other Go program would add its own tools.
//
// Every blob is a resource blob:///{key} (template blob:///{+key}): listed,
// read as base64 or text with an exact length and flat memory, streamed
// raw by resources/stream (SEP-2532: direct bytes, a redirect to a
// presigned URL, or a signed downloadUrl), and completed by key prefix.
// The tools list_blobs, stat_blob, delete_blob and get_download_link work
// on them; upload_file stores an x-mcp-file data URI (SEP-2356) — straight
// into storage when its key comes first — and request_upload elicits a file
// from the user in binary mode (SEP-1306 upload endpoints), form mode (an
// x-mcp-file field) or URL mode (the upload page), in both protocol eras;
// in 2026-07-28 the upload's link rides in the signed requestState, so every
// round of one call names the same upload until it is stored or expires.
// Every upload goes through storage/ingest, the one ingest path.
//
// SEP-2631 file objects (docs/files.md) sit on core/files: the files/*
// methods of both method sets (filemethods.go), the upload endpoint's
// check of a file's bytes against its pins ([App.FileUploaded]), and the
// opener of mcp-file URIs given as x-mcp-file values ([App.OpenFileURI]).
//
// The tools' schemas are data (schemas/*.json, embedded). Changes are
// published on the server's Hub. Upload endpoints are served by
// core/server, which reports progress and completion to the App so a
// request_upload waiting on this node can answer.
package blobs
