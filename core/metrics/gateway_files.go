package metrics

// FileRefused counts one request the gateway refused for a file, by
// surface: "argument" (an x-mcp-file argument of a tools/call) or
// "elicitation" (an x-mcp-file field of a form's answer)
// (fileargs.Metrics). Rare next to requests: looked up on each call.
func (s *Set) FileRefused(surface string) {
	s.set.GetOrCreateCounter(`mcpblob_gateway_file_refusals_total{surface="` + surface + `"}`).Inc()
}

// FileByReference counts one file the gateway stored for delivery by
// reference and its n decoded bytes (fileargs.Metrics).
func (s *Set) FileByReference(n int64) {
	s.set.GetOrCreateCounter(`mcpblob_gateway_files_by_reference_total`).Inc()
	s.set.GetOrCreateCounter(`mcpblob_gateway_files_by_reference_bytes_total`).AddInt64(n)
}
