// Package mcptest is an MCP client for tests and test harnesses: it talks
// to an MCP endpoint over Streamable HTTP in either protocol era, and
// [NewInMemory] runs an [mcp.Server] in-process, with no socket, behind an
// http.RoundTripper.
//
// A [Client] speaks one era:
//
//   - 2025-11-25 ([Version20251125]): [Client.Connect] sends initialize and
//     notifications/initialized; later requests carry MCP-Protocol-Version
//     and the Mcp-Session-Id the server gave, if any. [Client.Get] opens the session's SSE stream and
//     [Client.Delete] ends the session;
//   - 2026-07-28 ([Version20260728]): stateless. Every request's
//     params._meta starts with the protocol version and the client's
//     capabilities, mirrored in MCP-Protocol-Version, Mcp-Method and, for
//     the methods that name something, Mcp-Name. [Client.Connect] runs
//     server/discover (optional). [Client.CallToolRounds] answers an
//     InputRequiredResult round by round (MRTR) with a callback.
//
// Requests are built first ([Client.NewRequest], [Client.NewRaw],
// [Client.NewGet]) so a test can change any header or the body, then sent:
// [Client.Send] reads the whole answer and decodes its JSON-RPC message
// (a JSON body, or the SSE event that answers the request, with the
// messages sent before it); [Client.Open] gives the raw *http.Response;
// [Client.Events] reads an SSE answer message by message. Call, CallTool,
// Notify and Reply are the one-line forms. A [Response] keeps the status,
// headers and body, so tests that assert transport errors can read them;
// JSON-RPC errors and statuses are for the caller to judge, and only a
// failure to talk to the server is an error.
//
// File arguments ([File]) are sent as base64 data URIs encoded while the
// request body is written, from an io.Reader through an io.Pipe: a file
// argument of any size is never held in memory.
//
// Redirects are not followed: a 302 is an answer for the test to check.
//
// The package imports only core/mcp and the standard library.
package mcptest
