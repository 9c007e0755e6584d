// Package telemetry is what one HTTP request tells operators: its request
// id (accepted from X-Request-Id or minted), its route, its Prometheus
// metrics (package metrics) and its access-log line. core/server opens a
// Record when a request arrives, fills in the caller and the MCP method as
// it learns them, and ends the Record when the response is set.
//
// The request metrics (count, duration) are recorded when the handler
// returns, at the response's start. A body streamed after that (a download,
// an SSE stream) is logged when it is done: the access-log line is written
// then, with the bytes the body handed the connection and the time since the
// request arrived, and the sent-bytes counter grows by the same count.
// Streams in progress are the active_streams gauges.
//
// With a Tracer (SetTracer; package core/server/tracing implements it over
// OpenTelemetry) a Record also carries the request's spans: the HTTP span,
// the MCP span started when the endpoint begins work under the Record's
// context (observe.Work), and the children found with SpanParent (storage
// operations, the gateway's upstream call and decodes); the access-log
// line then names the trace id. Without one, nothing of it runs (trace.go).
package telemetry
