// Package tracing is mcpblob's OpenTelemetry tracing: the one package that
// imports the OpenTelemetry SDK. It implements the hooks the lower
// packages call (telemetry.Tracer for the HTTP front and the storage
// operations, observe.Tracer for the MCP endpoint, and the span hooks of
// the gateway, tus and the codec), and exports spans over OTLP/HTTP.
//
// Tracing is off unless the standard OTEL_* environment variables turn it
// on (FromEnv; docs/tracing.md): off, FromEnv returns nil, no hook is
// installed, and the request path pays one nil check per hook.
//
// The spans of one MCP request form a tree: the HTTP request (a child of
// the traceparent header's context), the MCP method (a child of
// params._meta.traceparent when valid, else of the HTTP span), and below
// it each storage operation, the gateway's upstream call, tus chunks and
// large base64 decodes. No attribute carries a key, a token, a path or a
// payload: methods, route names, registered tool names, operation names,
// outcomes, statuses and byte counts only.
package tracing
