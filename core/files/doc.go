// Package files is the model of SEP-2631 file objects: a file is an
// immutable byte sequence bound to the principal that authorized it, named
// by an mcp-file://<server>/<id> URI, with an optional sha-256 digest the
// client pinned before sending a byte. Its state (prepared, uploading,
// uploaded, completed, failed) is a storage record replaced by
// compare-and-swap ([Store]), so every node of a cluster reads the same
// state; its bytes are a blob the one ingest path stored. The record of a
// file without its bytes expires, and [Store.Sweep] removes it.
//
// The MCP methods over this model (the upstream PR's files/authorizeUpload
// and files/authorizeDownload, the fork's files/prepareUpload,
// files/completeUpload, files/getUpload and files/getDownload) are thin
// adapters in core/blobs; docs/files.md has the wire.
//
// It imports the standard library and storage.
package files
