package metrics

import (
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway"
)

var _ gateway.CacheMetrics = (*Set)(nil)

func TestGatewayStreamCache(t *testing.T) {
	s := New(Build{})
	for _, e := range []string{"hit", "hit", "miss", "store", "invalidation"} {
		s.StreamCache(e)
	}
	var b strings.Builder
	s.WritePrometheus(&b)
	for _, want := range []string{`mcpblob_gateway_stream_cache_total{event="hit"} 2`, `mcpblob_gateway_stream_cache_total{event="miss"} 1`,
		`mcpblob_gateway_stream_cache_total{event="store"} 1`, `mcpblob_gateway_stream_cache_total{event="invalidation"} 1`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
