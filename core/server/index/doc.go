// Package index answers GET / for a person (or a script) that points a
// browser or curl at the bare address first: a small JSON map of where to
// go from there, the MCP endpoint, the control API, the health checks and
// the documentation, instead of a bare "not found".
package index
