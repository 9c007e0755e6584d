// Package blobsvc is mcpblob's blob service over HTTP: every route that
// serves stored bytes or takes them, behind the front (package front),
// which hands it /v1/, /d/, /u/ and the upload page's paths through the
// front.Service interface. It never imports the front; the per-request
// rules both share (Host and Origin, the caller, upload slots, the body
// rate rule, error bodies) are package gate's.
//
// The control API /v1 (control.go, control_json.go; docs/control-api.md):
// blobs with streaming PUTs, GET/HEAD with ranges, DELETE and list;
// download links and upload endpoints minted on request; resumable
// uploads (tus 1.0.0) at /v1/tus/, package resumable's (tus.go routes them).
//
// The byte plane (docs/byte-plane.md): sealed download links GET|HEAD
// /d/{token} (download.go) with single ranges, validators and single-use
// redemption recorded as a storage claim (package onetime), each claim
// charged first to its token's principal against core/mcp's claims rate
// (claimrate.go: 429 beyond). Objects are served by byteplane_serve.go:
// local files go out by sendfile(2) (bodystream.SendReader), S3 bodies by
// a streamed copy or, with DownloadRedirect, a 302 to a presigned URL.
// Storage errors become HTTP statuses in one place (apiStorageError).
//
// Uploads (upload.go): POST|PUT /u/{token} streams multipart/form-data
// (mime/multipart over the body stream, never pre-parsed) or a raw body
// into storage through storage/ingest (as PUT /v1/blobs does), with the
// token's maxSize, accept and content sniffing enforced as bytes arrive
// and nothing visible until the whole body arrived; reuse is refused
// through IfNotExists on a key derived from the token. The same uploads
// resumable, tus at /u/{token}/tus/, are package linktus's, on this
// file's checks, claim, ingest errors and "upload done" (tus.go wires
// them). The upload page GET /upload/{token} and its sign-in are package
// uploadpage's.
package blobsvc
