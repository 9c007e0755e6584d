package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// row is one line of the table: a surface (or a storm) on one target.
type row struct {
	target, surface string
	storm           bool  // a storm row: the RSS threshold applies
	maxRSS          int64 // the row's own RSS threshold (0: the storms' when storm is set)

	inputs, clear, accepted, wrong, server, unclear int
	crashes, lost, half, secrets                    int

	peakRSS    int64
	healthzMax time.Duration
	slowProbes int // /healthz answers at or over the threshold, or failed
	probes     int
}

func (r *row) key() string { return r.target + " " + r.surface }

// rssLimit is the peak RSS the row must stay under (0: none).
func (r *row) rssLimit(c config) int64 {
	if r.maxRSS > 0 {
		return r.maxRSS
	}
	if r.storm {
		return c.maxRSS
	}
	return 0
}

// failure is one finding that fails the run.
type failure struct{ where, class, input, problem string }

// report collects rows, failures and notes, and renders them.
type report struct {
	cfg     config
	mu      sync.Mutex
	rows    []*row
	byKey   map[string]*row
	fails   []failure
	notes   []string
	setup   []string
	elapsed time.Duration
}

func newReport(c config) *report {
	r := &report{cfg: c, byKey: map[string]*row{}}
	if c.s3Note != "" {
		r.setup = append(r.setup, c.s3Note)
	}
	return r
}

// row returns the row of surface on target, creating it.
func (r *report) row(target, surface string) *row {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := target + " " + surface
	if x := r.byKey[k]; x != nil {
		return x
	}
	x := &row{target: target, surface: surface}
	r.byKey[k] = x
	r.rows = append(r.rows, x)
	return x
}

func (r *report) fail(where, class, input, problem string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails = append(r.fails, failure{where, class, input, problem})
}

func (r *report) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// absorb copies a monitor's samples into the rows (by phase label) and
// fails the thresholds: RSS during storms, /healthz everywhere.
func (r *report) absorb(m *monitor) {
	m.mu.Lock()
	labels := slices.Clone(m.labels)
	m.mu.Unlock()
	for _, label := range labels {
		s := m.get(label)
		slow := s.failed
		for _, d := range s.samples {
			if d >= r.cfg.maxHealthz {
				slow++
			}
		}
		if x := r.byKey[label]; x != nil {
			x.peakRSS, x.healthzMax, x.slowProbes, x.probes = s.peakRSS, s.healthzMax, slow, s.probes
			if limit := x.rssLimit(r.cfg); limit > 0 && s.peakRSS >= limit {
				r.fail(label, "RSS", "(RSS)", fmt.Sprintf("peak RSS %s ≥ %s", mib(s.peakRSS), mib(limit)))
			}
		}
		if slow > 0 {
			r.fail(label, "monitor", "(/healthz)", fmt.Sprintf("%d of %d /healthz probes took ≥ %s or failed (%d failed; slowest %s)",
				slow, s.probes, r.cfg.maxHealthz, s.failed, s.healthzMax.Round(time.Millisecond)))
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// finish prints the report (and writes it in full to -out); ok means no
// failure.
func (r *report) finish() (bool, error) {
	fmt.Print(r.markdown(40))
	if r.cfg.out != "" {
		if err := os.WriteFile(r.cfg.out, []byte(r.markdown(0)), 0o644); err != nil {
			return false, err
		}
	}
	return len(r.fails) == 0, nil
}

// markdown renders the table, then the findings (at most perGroup for
// each row; 0: all) and notes.
func (r *report) markdown(perGroup int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## mcpblob hardening (%s profile, %.0fs)\n\n", r.cfg.profile, r.elapsed.Seconds())
	b.WriteString("| target | surface | inputs | rejected clearly | accepted | wrong answer | 5xx / internal | unclear | crashes | lost / half-written | secrets in logs | peak RSS | /healthz max |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var tot row
	for _, x := range r.ordered() {
		writeRow(&b, x.target, x.surface, x)
		tot.add(x)
	}
	writeRow(&b, "**all**", "", &tot)
	fmt.Fprintf(&b, "\nThresholds: peak RSS < %s during storms and < %s during the state exhaustion class and the state storm; the second principal's p99 < %s during the state storm; every /healthz answer < %s (probed every %s, %s).\n",
		mib(r.cfg.maxRSS), mib(r.cfg.exhaustRSS), r.cfg.maxP99, r.cfg.maxHealthz, r.cfg.healthzEvery, probeKind(r.cfg))
	if len(r.fails) == 0 {
		b.WriteString("\n**Result: pass** (no crash, no lost or half-written object, no secret in the logs, no 5xx, no unclear or wrong answer, thresholds held).\n")
	} else {
		fmt.Fprintf(&b, "\n**Result: FAIL** (%d findings)\n", len(r.fails))
		r.writeFailures(&b, perGroup)
	}
	if len(r.notes) > 0 {
		b.WriteString("\n### Notes\n\n")
		for _, n := range r.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	b.WriteString("\n### Setup\n\n")
	for _, s := range r.setup {
		b.WriteString("- " + s + "\n")
	}
	return b.String()
}

func probeKind(c config) string {
	if c.probeKeepAlive {
		return "one kept-alive connection"
	}
	return "a new connection per probe"
}

func writeRow(b *strings.Builder, target, surface string, x *row) {
	rssCell, hzCell := "", ""
	if x.peakRSS > 0 {
		rssCell = mib(x.peakRSS)
	}
	if x.probes > 0 {
		hzCell = x.healthzMax.Round(time.Millisecond).String()
		if x.slowProbes > 0 {
			hzCell += fmt.Sprintf(" (%d ≥ limit)", x.slowProbes)
		}
	}
	fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s | %s |\n", target, surface,
		x.inputs, x.clear, x.accepted, x.wrong, x.server, x.unclear, x.crashes, x.lost+x.half, x.secrets, rssCell, hzCell)
}

func (t *row) add(x *row) {
	t.inputs += x.inputs
	t.clear += x.clear
	t.accepted += x.accepted
	t.wrong += x.wrong
	t.server += x.server
	t.unclear += x.unclear
	t.crashes += x.crashes
	t.lost += x.lost
	t.half += x.half
	t.secrets += x.secrets
	t.peakRSS = max(t.peakRSS, x.peakRSS)
	t.healthzMax = max(t.healthzMax, x.healthzMax)
	t.slowProbes += x.slowProbes
	t.probes += x.probes
}

// writeFailures lists the findings grouped by where they happened, at
// most perGroup of each group (0: all).
func (r *report) writeFailures(b *strings.Builder, perGroup int) {
	groups := map[string][]failure{}
	var order []string
	for _, f := range r.fails {
		if groups[f.where] == nil {
			order = append(order, f.where)
		}
		groups[f.where] = append(groups[f.where], f)
	}
	for _, w := range order {
		fs := groups[w]
		fmt.Fprintf(b, "\n#### %s (%d)\n\n", w, len(fs))
		for i, f := range fs {
			if i == perGroup && perGroup > 0 {
				fmt.Fprintf(b, "- … and %d more\n", len(fs)-i)
				break
			}
			fmt.Fprintf(b, "- [%s] `%s`: %s\n", f.class, wire.Clip(f.input, 100), f.problem)
		}
	}
}

// ordered is the rows by target (in the order they ran), then surface in
// the order of surfaces, then storms and the rest in the order they came.
func (r *report) ordered() []*row {
	rank := func(x *row) int {
		for i, s := range hostile.Surfaces {
			if s.Name == x.surface {
				return i
			}
		}
		return len(hostile.Surfaces)
	}
	var targets []string
	for _, x := range r.rows {
		if !slices.Contains(targets, x.target) {
			targets = append(targets, x.target)
		}
	}
	out := slices.Clone(r.rows)
	slices.SortStableFunc(out, func(a, b *row) int {
		if ta, tb := slices.Index(targets, a.target), slices.Index(targets, b.target); ta != tb {
			return ta - tb
		}
		return rank(a) - rank(b)
	})
	return out
}
