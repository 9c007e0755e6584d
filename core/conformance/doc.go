// Package conformance holds the official conformance suite's fixture tools,
// resources and prompts (@modelcontextprotocol/conformance): the names, texts
// and behaviours of the suite's reference everything-server. They are not
// part of mcpblob's production surface; cmd registers them with [Register]
// only when started with --conformance-fixtures.
//
// Everything goes through core/mcp's public registration API
// ([mcp.Server.AddTool], AddResource, AddResourceTemplate, AddPrompt), so
// this package knows nothing of transports or eras beyond what a [mcp.Call]
// tells a handler. The wire output is pinned by the golden transcripts in
// core/server/testdata/conformance: tools/list shows the fixture tools in
// registration order, each with only name, description and inputSchema,
// so [Register] adds them in one fixed order and the texts and schemas
// here must not change without updating those transcripts.
//
// Tools that need client input are straight-line handlers around
// [mcp.Call.Input]: in 2025-11-25 each request goes out on the call's SSE
// stream and the answer comes back; in 2026-07-28 Input returns the answers
// the retried call carries, or an error the handler returns as it is so
// the server answers with an InputRequiredResult. The stateful MRTR tools
// keep their progress ({"Round":1}, then {"Name":…,"Round":2}) with
// [mcp.Call.SetState], which the server signs into requestState.
package conformance
