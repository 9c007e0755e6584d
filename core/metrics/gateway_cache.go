package metrics

import "fmt"

// StreamCache counts one event of the gateway's stream cache
// (--stream-cache; gateway.CacheMetrics): "hit", "miss", "store" or
// "invalidation", the gateway's fixed names.
func (s *Set) StreamCache(event string) {
	counter(s, &s.gwcache, event, func() string {
		return fmt.Sprintf(`mcpblob_gateway_stream_cache_total{event=%s}`, quote(event))
	}).Inc()
}
