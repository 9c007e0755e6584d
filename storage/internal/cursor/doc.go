// Package cursor encodes the opaque List cursors that mcpblob's storage
// backends hand out: the unpadded base64url form of the last key of a page.
// A cursor therefore survives restarts and works on any node sharing the
// same store, and a decoded cursor is always a valid key.
package cursor
