// Package load runs mcpblob's load tests with vegeta (github.com/tsenart/vegeta,
// MIT) as a library: each Scenario is a constant arrival rate (vegeta's open
// model: a slow answer does not delay the next request, so coordinated
// omission cannot hide a slow server) built by a Targeter that makes every
// request afresh (a new JSON-RPC id, the MCP session header), with checks on
// each answer (status, no JSON-RPC error, lengths and sha256 of what comes
// back) sorted into error classes, latency percentiles, thresholds, a text
// summary and an HTML latency plot (vegeta's lib/plot).
//
// Bodies are never all kept: vegeta keeps the first KeepBody bytes of each
// answer (Attacker MaxBody), and the transport counts the rest and, for
// resources/read answers, decodes the base64 blob as it streams past into a
// sha256 (see observer), so 64 MiB reads cost no memory per request.
package load
