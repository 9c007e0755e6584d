package metrics

// QuotaRefused counts one upload refused by a quota (storage/quota):
// what is "bytes", "objects" or "uploads in flight", a bounded set. No
// principal label: one series per principal would have no bound.
func (s *Set) QuotaRefused(what string) {
	s.set.GetOrCreateCounter(`mcpblob_quota_refusals_total{quota=` + quote(what) + `}`).Inc()
}

// QuotaCharged adds one settled change of some principal's usage, summed
// over every principal: bytes and objects counted (positive) or given
// back (negative), as mcpblob_quota_{counted,released}_{bytes,objects}_total.
func (s *Set) QuotaCharged(bytes, objects int64) {
	dir := "counted"
	if bytes < 0 || objects < 0 {
		dir = "released"
	}
	s.set.GetOrCreateCounter(`mcpblob_quota_` + dir + `_bytes_total`).AddInt64(max(bytes, -bytes))
	s.set.GetOrCreateCounter(`mcpblob_quota_` + dir + `_objects_total`).AddInt64(max(objects, -objects))
}
