package mcp

import "github.com/mcpblob/mcpblob/core/mcp/jsonrpc"

// JSON-RPC and MCP error codes (docs/protocol.md, "Error codes"), declared in
// package jsonrpc.
const (
	CodeParseError     = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	CodeInternalError  = jsonrpc.CodeInternalError
	// CodeTransport and CodeSessionNotFound are implementation-defined
	// (-32000…-32019), chosen to match the TypeScript SDK.
	CodeTransport       = jsonrpc.CodeTransport
	CodeSessionNotFound = jsonrpc.CodeSessionNotFound
	// CodeResourceNotFound is the 2025-11-25 resource-not-found code; the
	// 2026-07-28 era uses CodeInvalidParams instead (SEP-2164).
	CodeResourceNotFound       = jsonrpc.CodeResourceNotFound
	CodeHeaderMismatch         = jsonrpc.CodeHeaderMismatch
	CodeMissingCapability      = jsonrpc.CodeMissingCapability
	CodeUnsupportedVersion     = jsonrpc.CodeUnsupportedVersion
	CodeURLElicitationRequired = jsonrpc.CodeURLElicitationRequired
)

// Error is a JSON-RPC error object ([jsonrpc.Error]). It implements error
// so method handlers can return it; Status, when non-zero, is the HTTP
// status used when the error is the whole response.
type Error = jsonrpc.Error

// NewError returns a JSON-RPC error object; chain WithStatus and
// WithHeader for the HTTP answer when it is the whole response.
func NewError(code int, msg string, data any) *Error { return jsonrpc.NewError(code, msg, data) }
