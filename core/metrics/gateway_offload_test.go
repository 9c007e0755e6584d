package metrics

import (
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway"
)

var _ gateway.OffloadMetrics = (*Set)(nil)

func TestGatewayOffloads(t *testing.T) {
	s := New(Build{})
	s.Offloaded(3 << 20)
	s.Offloaded(1 << 20)
	var b strings.Builder
	s.WritePrometheus(&b)
	for _, want := range []string{"mcpblob_gateway_offloads_total 2", "mcpblob_gateway_offloaded_bytes_total 4194304"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
