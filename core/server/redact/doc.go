// Package redact keeps secrets out of logs: a slog.Handler that rewrites
// every message and attribute with [String] (bearer credentials, API keys,
// signed and sealed tokens, presigned queries, data URI payloads), and
// [Path] for request paths that carry a token. core/server puts every
// logger it is given behind [NewHandler].
package redact
