// Package telemetry is what one HTTP request tells operators: its request
// id (accepted from X-Request-Id or minted), its route, its Prometheus
// metrics (package metrics) and its access-log line. core/server opens a
// Record when a request arrives, fills in the caller and the MCP method as
// it learns them, and ends the Record when the response is set.
//
// The duration and byte counts are those known when the handler returns:
// a body streamed after that (a download, an SSE stream) is counted by its
// declared length, and its time is not in the duration. Streams in
// progress are the active_streams gauges instead.
package telemetry
