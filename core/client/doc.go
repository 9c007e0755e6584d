// Package client is the Go client of mcpblob's control API (/v1, see
// docs/control-api.md). Other Go programs, and the mcpblob CLI, use it to store
// bytes, fetch them (with resumable downloads), list and delete blobs, and mint
// download links and upload endpoints, without speaking MCP. PutFile uploads
// a file resumably with tus 1.0.0 (/v1/tus/, docs/uploads.md): in checksummed
// chunks, retried from the server's offset, continued by a later run (another
// process) through a record in a state directory, and checked against the
// blob's sha256 at the end.
//
// A Client is safe for concurrent use. Errors from the server are *Error
// values; errors.Is(err, ErrNotFound) and the other sentinels test their codes.
// Transfers stream: no method holds a whole blob in memory (PutFile holds one
// chunk).
package client
