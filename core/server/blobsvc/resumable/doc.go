// Package resumable is the control API's resumable uploads
// (docs/uploads.md): tus 1.0.0 at /v1/tus/ through package core/tus, with
// the credentials, scopes, upload slots, body rate rule and size limit of
// PUT /v1/blobs. Upload-Metadata names the blob: "key" (or, without it,
// "filename"), "filetype" or "contentType" its media type, "filename" its
// filename; a partial upload of a concatenation names none. A complete
// upload is stored under its key through storage/ingest, in the caller's
// view of the store, as PUT stores it; Sweep removes expired uploads.
// Package blobsvc routes /v1/tus to it after authentication.
package resumable
