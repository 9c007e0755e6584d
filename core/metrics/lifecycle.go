package metrics

// Expired counts one blob the lifecycle sweeper deleted and its size n
// in bytes (storage/lifecycle). Sweeps are rare next to requests: the
// series are looked up on each call.
func (s *Set) Expired(n int64) {
	s.set.GetOrCreateCounter(`mcpblob_lifecycle_expired_blobs_total`).Inc()
	s.set.GetOrCreateCounter(`mcpblob_lifecycle_expired_bytes_total`).AddInt64(n)
}

// SweepRound counts one lifecycle sweep round of this node with its
// outcome: "swept" (this node's turn), "skipped" (another node's) or
// "error".
func (s *Set) SweepRound(outcome string) {
	s.set.GetOrCreateCounter(`mcpblob_lifecycle_sweep_rounds_total{outcome=` + quote(outcome) + `}`).Inc()
}
