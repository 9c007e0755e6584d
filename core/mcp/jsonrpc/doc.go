// Package jsonrpc is the JSON-RPC 2.0 layer of package mcp: the error codes
// and [Error] object, the reading of one message from what the request
// scanner found ([Parse], which never decodes the message again), and the
// wire builders that write responses, notifications and server-to-client
// requests by appending, so ids are echoed byte for byte and large results
// never pass through encoding/json.
//
// It imports the standard library and core/mcp/scan (whose [scan.Message]
// it reads) only. Package mcp imports it and re-exports [Error] and the
// Code constants; jsonrpc never imports mcp.
package jsonrpc
