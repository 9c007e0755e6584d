// Package metrics holds mcpblob's Prometheus metric families and records
// into them: HTTP requests by route, MCP requests by method and era, bytes
// by plane, streams in progress, uploads, storage operations, sessions, the
// build, and the gateway's upstream calls and bytes (gateway.go),
// offloads (gateway_offload.go) and stream cache (gateway_cache.go). A Set writes the text exposition format,
// with the Go runtime and process collectors, to any io.Writer
// (VictoriaMetrics/metrics).
//
// Every label value is bounded: routes and planes are fixed names, HTTP
// methods outside the standard ones count as OTHER, MCP methods the server
// does not offer as "other". No key, path or principal is ever a label.
// Recording costs well under a microsecond (BenchmarkRequest).
package metrics
