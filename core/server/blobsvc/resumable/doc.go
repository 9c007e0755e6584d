// Package resumable is the control API's resumable uploads
// (docs/uploads.md): tus 1.0.0 at /v1/tus/ through package core/tus, with
// the credentials, scopes, upload slots, body rate rule and size limit of
// PUT /v1/blobs. Upload-Metadata names the blob: "key" (or, without it,
// "filename"), "filetype" or "contentType" its media type, "filename" its
// filename; a partial upload of a concatenation names none. On a store
// with staged writes (storage.Stager) an upload's object is begun in the
// caller's view when the upload is created and its bytes go there once;
// completion commits it through storage/ingest's checks, as PUT's, with
// no copy (ingest.CommitStaged). A concatenation, or a store without
// staged writes, stores the complete bytes through storage/ingest as PUT
// does. Sweep removes expired uploads, one node per round on a store with
// claims, and runs Env.AlsoSweep (the SEP-2631 file records') in the same
// rounds.
// Package blobsvc routes /v1/tus to it after authentication.
package resumable
