package load

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/tsenart/vegeta/v12/lib/plot"
)

// Report is what one Scenario run measured.
type Report struct {
	Scenario Scenario
	Metrics  vegeta.Metrics             // every request: count, rate, latency percentiles
	Kinds    map[string]*vegeta.Metrics // per Label
	Errors   map[string]int             // error class → requests
	Failed   int                        // requests with an error class
	CPU      time.Duration              // this process's CPU time during the run (the load generator)
	html     []byte
}

func newReport(s Scenario) *Report {
	return &Report{Scenario: s, Kinds: map[string]*vegeta.Metrics{}, Errors: map[string]int{}}
}

func (r *Report) add(res *vegeta.Result, class, k string) {
	if class != "" {
		r.Errors[class]++
		r.Failed++
		if res.Error == "" {
			res.Error = class // so vegeta's success ratio and the plot count it
		}
	}
	r.Metrics.Add(res)
	if r.Kinds[k] == nil {
		r.Kinds[k] = &vegeta.Metrics{}
	}
	r.Kinds[k].Add(res)
}

func (r *Report) close(p *plot.Plot) {
	r.Metrics.Close()
	for _, m := range r.Kinds {
		m.Close()
	}
	var b strings.Builder
	if _, err := p.WriteTo(&b); err == nil {
		r.html = []byte(b.String())
	}
}

// Requests is how many requests were sent.
func (r *Report) Requests() int { return int(r.Metrics.Requests) }

// P99 is the 99th latency percentile over every request.
func (r *Report) P99() time.Duration { return r.Metrics.Latencies.P99 }

// Threshold is one pass/fail bound of a run.
type Threshold struct {
	Name string
	OK   bool
	Got  string
}

// Thresholds are the run's bounds: no request failed (no transport error,
// no failed check), and p99 under the Scenario's P99.
func (r *Report) Thresholds() []Threshold {
	t := []Threshold{{"errors == 0", r.Failed == 0 && r.Requests() > 0, fmt.Sprintf("%d of %d", r.Failed, r.Requests())}}
	if r.Scenario.P99 > 0 {
		t = append(t, Threshold{fmt.Sprintf("p99 < %s", r.Scenario.P99), r.P99() < r.Scenario.P99, ms(r.P99())})
	}
	return t
}

// OK says whether every threshold held.
func (r *Report) OK() bool {
	for _, t := range r.Thresholds() {
		if !t.OK {
			return false
		}
	}
	return true
}

// FailedThresholds names the bounds that did not hold, with the figure.
func (r *Report) FailedThresholds() []string {
	var out []string
	for _, t := range r.Thresholds() {
		if !t.OK {
			out = append(out, t.Name+" (got "+t.Got+")")
		}
	}
	return out
}

// Text is the run's summary: rate, percentiles per kind, error classes
// and thresholds.
func (r *Report) Text() string {
	var b strings.Builder
	s, m := r.Scenario, r.Metrics
	asked := "back to back"
	if s.Rate > 0 {
		asked = fmt.Sprintf("%d/s for %s", s.Rate, s.Duration)
	}
	fmt.Fprintf(&b, "scenario %s: asked %s; sent %d (%.1f/s), answered %.1f/s; load generator CPU %.0f µs/request\n",
		s.Name, asked, m.Requests, m.Rate, m.Throughput, perRequest(r.CPU, m.Requests))
	b.WriteString(latencyLine("all", &m))
	for _, k := range slices.Sorted(maps.Keys(r.Kinds)) {
		if len(r.Kinds) > 1 {
			b.WriteString(latencyLine(k, r.Kinds[k]))
		}
	}
	fmt.Fprintf(&b, "bytes in %d (mean %.0f), out %d (mean %.0f)\n", m.BytesIn.Total, m.BytesIn.Mean, m.BytesOut.Total, m.BytesOut.Mean)
	for _, c := range slices.Sorted(maps.Keys(r.Errors)) {
		fmt.Fprintf(&b, "error %s: %d\n", c, r.Errors[c])
	}
	for _, t := range r.Thresholds() {
		verdict := "ok"
		if !t.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(&b, "threshold %s: %s (%s)\n", t.Name, verdict, t.Got)
	}
	return b.String()
}

func latencyLine(kind string, m *vegeta.Metrics) string {
	l := m.Latencies
	return fmt.Sprintf("latency %-12s n %-6d min %s  med %s  p90 %s  p95 %s  p99 %s  max %s\n",
		kind, m.Requests, ms(l.Min), ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.Max))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func perRequest(d time.Duration, n uint64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(n)
}

// Write saves the summary as dir/name.txt and the latency plot as
// dir/name.html.
func (r *Report) Write(dir, name string) error {
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(r.Text()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".html"), r.html, 0o644)
}
