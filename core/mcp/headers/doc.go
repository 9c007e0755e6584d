// Package headers holds the Streamable HTTP header names of package mcp
// and the SEP-2243 rules that check header values against the request
// body: the "=?base64?…?=" value form ([Decode]), Mcp-Name ([CheckName]),
// and the Mcp-Param-* headers that mirror a tool's x-mcp-header arguments
// ([Params], [CheckParams]). A failed check is a -32020 [jsonrpc.Error]
// with HTTP 400.
//
// It needs only a [Getter] for the request headers and imports the
// standard library and core/mcp/jsonrpc only. Package mcp imports it,
// never the reverse.
package headers
