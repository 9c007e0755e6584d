package metrics

import (
	"strings"
	"testing"
)

func TestLifecycleSweeps(t *testing.T) {
	s := New(Build{})
	s.Expired(100)
	s.Expired(23)
	s.SweepRound("swept")
	s.SweepRound("skipped")
	s.SweepRound("skipped")
	var b strings.Builder
	s.WritePrometheus(&b)
	for _, want := range []string{"mcpblob_lifecycle_expired_blobs_total 2", "mcpblob_lifecycle_expired_bytes_total 123",
		`mcpblob_lifecycle_sweep_rounds_total{outcome="swept"} 1`, `mcpblob_lifecycle_sweep_rounds_total{outcome="skipped"} 2`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
