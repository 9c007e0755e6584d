package metrics

import (
	"strings"
	"testing"
)

func TestQuota(t *testing.T) {
	s := New(Build{})
	s.QuotaRefused("bytes")
	s.QuotaCharged(10, 1)
	s.QuotaCharged(-4, -1)
	var b strings.Builder
	s.WritePrometheus(&b)
	for _, want := range []string{`mcpblob_quota_refusals_total{quota="bytes"} 1`, "mcpblob_quota_counted_bytes_total 10",
		"mcpblob_quota_released_bytes_total 4", "mcpblob_quota_released_objects_total 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
