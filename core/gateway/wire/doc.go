// Package wire reads, in passing and within bounds, the two framings the
// gateway looks into without decoding whole: the head of a JSON-RPC message
// (PeekMessage: its top-level method and id, every other value skipped
// unread) and Server-Sent Events (ReadEvent, one event at a time from a
// budget; ReplaceData, an event with new data and its other lines kept;
// BetweenEvents, whether a stream relayed so far stands between events),
// and an answer's media type (MediaType: mime.ParseMediaType's, at once
// for MCP's two).
package wire
