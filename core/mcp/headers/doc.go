// Package headers holds the request-header rules of package mcp's
// Streamable HTTP transport: the header names, Accept negotiation
// ([ParseAccept]), and the SEP-2243 checks of header values against the
// request body: the "=?base64?…?=" value form ([Decode]), Mcp-Method
// ([CheckMethod]), Mcp-Name and the params member it mirrors
// ([CheckName], [CheckNameParam]), and the Mcp-Param-* headers that mirror
// a tool's x-mcp-header arguments ([Params], [CheckParams]). A failed check
// is a -32020 [jsonrpc.Error] with HTTP 400 ([Mismatch]).
//
// It needs only a [Getter] for the request headers and imports the
// standard library and core/mcp/jsonrpc only. Package mcp imports it,
// never the reverse.
package headers
