// Package mrtr holds the requestState of multi round-trip requests
// (MRTR, SEP-2322), the 2026-07-28 way a handler asks the client for input:
// the [Envelope] a state carries (the handler's progress, digests of the
// call's arguments, the x-mcp-file fields the round asked for), its
// signing and verification as a token bound to the principal, the method
// and the request's name ([Sign], [Verify]), the check that a retry kept
// its arguments ([CheckArgs]), and the validation of inputResponses
// ([Responses]).
//
// Call.Input, the InputRequiredResult and the routing of file answers stay
// in package mcp, which imports this package; mrtr imports the standard
// library, core/token, core/mcp/jsonrpc and core/mcp/scan (for the
// x-mcp-file descriptor) only, never mcp.
package mrtr
