package metrics

// Offloaded counts one blob the gateway moved out of an upstream's answer
// into the store (--offload-over) and its n decoded bytes
// (gateway.OffloadMetrics). Offloads are rare next to requests: the
// series are looked up on each call.
func (s *Set) Offloaded(n int64) {
	s.set.GetOrCreateCounter(`mcpblob_gateway_offloads_total`).Inc()
	s.set.GetOrCreateCounter(`mcpblob_gateway_offloaded_bytes_total`).AddInt64(n)
}
