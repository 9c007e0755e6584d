// Package client is the Go client of mcpblob's control API (/v1, see
// docs/control-api.md). Other Go programs, and the mcpblob CLI, use it to store
// bytes, fetch them (with resumable downloads), list and delete blobs, and mint
// download links and upload endpoints, without speaking MCP.
//
// A Client is safe for concurrent use. Errors from the server are *Error
// values; errors.Is(err, ErrNotFound) and the other sentinels test their codes.
// Transfers stream: no method holds a whole blob in memory.
package client
