package metrics

import (
	"fmt"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// The gateway's families (`serve --upstream`, package core/gateway): its
// calls to the upstream by outcome, their latency to the response headers,
// and the bytes it moved. Outcomes and directions are the gateway's fixed
// names, so the labels stay bounded.

// gatewaySeries are the gateway families, made on first use.
type gatewaySeries struct {
	once     sync.Once
	duration *vm.PrometheusHistogram
}

// Upstream counts one call to the upstream that ended with outcome ("ok"
// or an error kind) and, for a call that got its response headers (or
// failed trying), records d.
func (s *Set) Upstream(outcome string, d time.Duration) {
	counter(s, &s.upstream, outcome, func() string {
		return fmt.Sprintf(`mcpblob_gateway_upstream_requests_total{outcome=%s}`, quote(outcome))
	}).Inc()
	if d <= 0 {
		return
	}
	s.gateway.once.Do(func() {
		s.gateway.duration = s.set.GetOrCreatePrometheusHistogramExt(`mcpblob_gateway_upstream_duration_seconds`, durationBuckets)
	})
	s.gateway.duration.Update(d.Seconds())
}

// Relayed adds n bytes the gateway moved in direction: "to_upstream"
// (request bodies), "to_client" (answers relayed) or "decoded" (raw bytes
// of its own resources/stream downloads).
func (s *Set) Relayed(direction string, n int64) {
	if n <= 0 {
		return
	}
	counter(s, &s.relayed, direction, func() string {
		return fmt.Sprintf(`mcpblob_gateway_bytes_total{direction=%s}`, quote(direction))
	}).AddInt64(n)
}
