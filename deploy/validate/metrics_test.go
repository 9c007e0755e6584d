package validate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// family is a metric family mcpblob exports on /metrics.
type family struct {
	labels    []string
	histogram bool                // exposed as _bucket (with le), _sum and _count
	values    map[string][]string // every value of an enumerated label
}

// families are mcpblob's metric families: its own (core/metrics), then the
// Go runtime and process collectors. The dashboard and the alerts may
// name these only. The list is written out, not scraped; label values are
// those of core/metrics' constants and core/server/telemetry's routes.
var families = map[string]family{
	"mcpblob_http_requests_total": {labels: []string{"route", "method", "code"}, values: map[string][]string{
		"route":  routes,
		"method": {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "OTHER"}}},
	"mcpblob_http_request_duration_seconds": {labels: []string{"route"}, histogram: true, values: map[string][]string{"route": routes}},
	"mcpblob_mcp_requests_total": {labels: []string{"method", "era", "outcome"}, values: map[string][]string{
		"era": {"2025-11-25", "2026-07-28"}, "outcome": {"ok", "tool_error", "error"}}},
	"mcpblob_bytes_sent_total":     {labels: []string{"plane"}, values: map[string][]string{"plane": planes}},
	"mcpblob_bytes_received_total": {labels: []string{"plane"}, values: map[string][]string{"plane": planes}},
	"mcpblob_active_streams":       {labels: []string{"kind"}, values: map[string][]string{"kind": {"sse", "listen", "download", "upload"}}},
	"mcpblob_uploads_total": {labels: []string{"surface", "outcome"}, values: map[string][]string{
		"surface": {"mcp", "upload-endpoint", "control"}, "outcome": {"ok", "rejected", "error"}}},
	"mcpblob_storage_operations_total": {labels: []string{"backend", "op", "outcome"}, values: map[string][]string{
		"op":      {"stat", "get", "put", "delete", "list", "presign", "claim", "claimed", "release", "sweep"},
		"backend": {"localfs", "s3"},
		"outcome": {"ok", "not_found", "exists", "aborted", "error"}}},
	"mcpblob_storage_operation_duration_seconds": {labels: []string{"backend", "op"}, histogram: true},
	"mcpblob_sessions_active":                    {},
	"mcpblob_build_info":                         {labels: []string{"version", "go", "codec_encode", "codec_decode", "json_scan"}},
	"go_goroutines":                              {},
	"process_resident_memory_bytes":              {},
	"process_cpu_seconds_total":                  {},
	"process_open_fds":                           {},
}

// familyPrefixes admit whole groups of runtime families (go_memstats_*).
var familyPrefixes = []string{"go_memstats_"}

var (
	planes = []string{"mcp-read", "stream", "download", "upload", "control"}
	routes = []string{"mcp", "v1-blob", "v1-blobs", "v1-links", "v1-uploads", "v1-other", "download", "upload",
		"upload-page", "oauth-metadata", "oauth-callback", "oauth-logout", "healthz", "readyz", "metrics", "other"}
)

// targetLabels are the labels Prometheus adds to every series it scrapes
// (deploy/prometheus/prometheus.yml's relabelling and static labels).
var targetLabels = []string{"job", "instance", "namespace", "pod", "node"}

// scrapeSeries are the series Prometheus itself writes for each target;
// alert rules may use them, the dashboard does not.
var scrapeSeries = []string{"up"}

// lookupFamily finds the family a series name belongs to and whether the
// name is a histogram's _bucket series (which adds the le label).
func lookupFamily(name string) (f family, bucket bool, err error) {
	if f, ok := families[name]; ok {
		if f.histogram {
			return f, false, fmt.Errorf("%s is a histogram: query its _bucket, _sum or _count series", name)
		}
		return f, false, nil
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f, ok := families[base]; ok && f.histogram {
				return f, suffix == "_bucket", nil
			}
		}
	}
	for _, p := range familyPrefixes {
		if strings.HasPrefix(name, p) {
			return family{}, false, nil
		}
	}
	return family{}, false, fmt.Errorf("%s is not a metric family mcpblob exports", name)
}

var promQL = parser.NewParser(parser.Options{})

// promQLUse is what an expression selects.
type promQLUse struct {
	names []string          // series names selected
	jobs  []*labels.Matcher // matchers on the job label
}

// checkPromQL parses expr and checks that every selector names a family
// mcpblob exports (or, with scrape, a series Prometheus writes), with
// labels that family has and, for enumerated labels, values it takes; and
// that every by/without label of an aggregation exists below it.
func checkPromQL(expr string, scrape bool) (promQLUse, error) {
	var use promQLUse
	e, err := promQL.ParseExpr(expr)
	if err != nil {
		return use, err
	}
	var errs []error
	// known returns the labels the selectors below n can carry.
	known := func(n parser.Node) map[string]bool {
		ls := map[string]bool{}
		for _, l := range targetLabels {
			ls[l] = true
		}
		parser.Inspect(n, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				f, bucket, _ := lookupFamily(vs.Name)
				for _, l := range f.labels {
					ls[l] = true
				}
				if bucket {
					ls["le"] = true
				}
			}
			return nil
		})
		return ls
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			if n.Name == "" {
				errs = append(errs, fmt.Errorf("selector %s names no metric", n))
				return nil
			}
			use.names = append(use.names, n.Name)
			if scrape && slices.Contains(scrapeSeries, n.Name) {
				for _, m := range n.LabelMatchers {
					if m.Name == "job" {
						use.jobs = append(use.jobs, m)
					}
				}
				return nil
			}
			f, bucket, err := lookupFamily(n.Name)
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			for _, m := range n.LabelMatchers {
				switch {
				case m.Name == model.MetricNameLabel:
				case m.Name == "job":
					use.jobs = append(use.jobs, m)
				case slices.Contains(targetLabels, m.Name), m.Name == "le" && bucket:
				case !slices.Contains(f.labels, m.Name):
					errs = append(errs, fmt.Errorf("%s has no label %q (it has %v)", n.Name, m.Name, f.labels))
				case m.Type == labels.MatchEqual && f.values[m.Name] != nil && !slices.Contains(f.values[m.Name], m.Value):
					errs = append(errs, fmt.Errorf("%s{%s=%q}: %s is one of %v", n.Name, m.Name, m.Value, m.Name, f.values[m.Name]))
				}
			}
		case *parser.AggregateExpr:
			ls := known(n.Expr)
			for _, g := range n.Grouping {
				if !ls[g] {
					errs = append(errs, fmt.Errorf("%s by/without %q: no series below carries that label", n.Op, g))
				}
			}
		}
		return nil
	})
	return use, errors.Join(errs...)
}

func TestPromQLRejects(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`rate(mcpblob_http_request_total[5m])`, "not a metric family"},
		{`mcpblob_http_request_duration_seconds`, "is a histogram"},
		{`sum(rate(mcpblob_bytes_sent_total{plan="upload"}[5m]))`, `no label "plan"`},
		{`sum(rate(mcpblob_bytes_sent_total{plane="uploads"}[5m]))`, "plane is one of"},
		{`sum by (rout) (rate(mcpblob_http_requests_total[5m]))`, `"rout"`},
		{`histogram_quantile(0.99, sum by (le) (rate(mcpblob_http_request_duration_seconds_sum[5m])))`, `"le"`},
		{`up == 0`, "not a metric family"},
		{`sum(rate(mcpblob_http_requests_total[5m])`, "unclosed"},
	} {
		t.Run(c.expr, func(t *testing.T) {
			_, err := checkPromQL(c.expr, false)
			wantRejected(t, err, c.want)
		})
	}
	if _, err := checkPromQL(`up{job="mcpblob"} == 0`, true); err != nil {
		t.Errorf("up in an alert rule: %v", err)
	}
}
