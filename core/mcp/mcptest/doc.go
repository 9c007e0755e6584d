// Package mcptest is an MCP client for tests and test harnesses: it talks
// to an MCP endpoint over Streamable HTTP in either protocol era, and
// [NewInMemory] runs an [mcp.Server] in-process, with no socket, behind an
// http.RoundTripper (or a ready [Client]).
//
// A [Client] speaks one era:
//
//   - 2025-11-25 ([Version20251125]): [Client.Connect] sends initialize and
//     notifications/initialized; later requests carry MCP-Protocol-Version
//     and the Mcp-Session-Id the server gave, if any. [Client.Get] opens the
//     session's SSE stream and [Client.Delete] ends the session;
//   - 2026-07-28 ([Version20260728]): stateless. Every request's
//     params._meta starts with the protocol version and the client's
//     capabilities, mirrored in MCP-Protocol-Version, Mcp-Method and, for
//     the methods that name something, Mcp-Name. [Client.Connect] runs
//     server/discover (optional).
//
// [Client.CallToolRounds] answers a tool's input requests with a callback
// until the call ends: by retrying each InputRequiredResult with
// requestState and inputResponses (2026-07-28, [Client.Retry] for one
// round), or by replying to the requests the server sends on the call's
// SSE stream (2025-11-25).
//
// Requests are built first ([Client.NewRequest], [Client.NewRaw],
// [Client.NewGet], [Client.NewToolRequest]…) so a test can change any
// header or the body, then sent: [Client.Send] reads the whole answer and
// decodes its JSON-RPC message (a JSON body, or the SSE event that answers
// the request, with the messages sent before it); [Client.Open] gives the
// raw *http.Response; [Client.Events] reads an SSE answer message by
// message. Call, CallTool, Notify and Reply are the one-line forms. A
// [Response] keeps the status, headers and body, so tests that assert
// transport errors can read them: statuses and JSON-RPC errors are for the
// caller to judge, and only a failure to talk to the server (or an answer
// that is not JSON-RPC, [ErrMalformed]) is an error. [ReadAnswer] and
// [NewStream] decode answers a test read by other means (a raw
// connection), and [Client.WithMeta] gives the params of a body built by
// hand.
//
// File arguments ([File], [FileArg]) are sent as base64 data URIs encoded
// while the request body is written, from an io.Reader through an io.Pipe:
// a file argument of any size is never held in memory.
//
// [NewHTTPClient], the default, follows no redirect: a 302 is an answer
// for the test to check.
//
// The package imports only core/mcp and the standard library.
package mcptest
