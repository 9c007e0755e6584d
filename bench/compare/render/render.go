package render

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

// The generic rendering of targets: whatever workload filled a
// pair.Target (P1–P7 in package main, P8–P10 in package scale) gets a row in the
// targets table, its miss lines and a chart of its per-run ratios.

// SortTargets orders targets by number (P1, P2, …, P10).
func SortTargets(ts []*pair.Target) {
	num := func(id string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(id, "P"))
		if err != nil {
			return 1 << 30
		}
		return n
	}
	slices.SortStableFunc(ts, func(a, b *pair.Target) int { return cmp.Compare(num(a.ID), num(b.ID)) })
}

// Verdict is a target's verdict cell.
func Verdict(t *pair.Target) string {
	switch {
	case t.NotRun != "":
		return "not run"
	case t.Met():
		return "met"
	default:
		return "**missed**"
	}
}

// pairMet applies the target's rule for pair i (median, or every run).
func pairMet(t *pair.Target, i int) bool {
	if i < len(t.EveryRun) && t.EveryRun[i] {
		return t.Pairs[i].EveryRun()
	}
	return t.Pairs[i].Met()
}

// wantText is "≥ 0.7×" or "≤ 2×", with "in every run" when asked.
func wantText(t *pair.Target, i int) string {
	p := t.Pairs[i]
	s := fmt.Sprintf("≥ %g×", p.Want)
	if p.Max {
		s = fmt.Sprintf("≤ %g×", p.Want)
	}
	if i < len(t.EveryRun) && t.EveryRun[i] {
		s += " in every run"
	}
	return s
}

// measuredText is the measured cell: every pair's median and spread, the
// medians behind it, then the bounds.
func measuredText(t *pair.Target) string {
	if t.NotRun != "" {
		return t.NotRun
	}
	var parts []string
	for i, p := range t.Pairs {
		s := fmt.Sprintf("%s: %s", p.Label, ratioText(p))
		if _, om, _, ok := pair.Stats(Positive(p.Ours)); ok && len(t.Pairs) <= 4 {
			_, rm, _, _ := pair.Stats(Positive(p.Ref))
			s += fmt.Sprintf(" [%s %s vs %s %s]", Human(om), p.Unit, p.RefName, Human(rm))
		}
		if !pairMet(t, i) {
			s += " ✗"
		}
		parts = append(parts, s)
	}
	for _, b := range t.Bounds {
		mark := ""
		if !b.Met() {
			mark = " ✗"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s (≤ %s)%s", b.Label, figure(b.Value), b.Unit, figure(b.Limit), mark))
	}
	if len(t.Errors) > 0 {
		parts = append(parts, fmt.Sprintf("%d errors: %s", len(t.Errors), Trunc(t.Errors[0], 100)))
	}
	return strings.ReplaceAll(strings.Join(parts, "; "), "|", "/")
}

// missLines are a target's "why / what would close it" lines: its own
// when the workload wrote them, else generic ones computed from the
// figures, so that no miss goes without one.
func missLines(t *pair.Target) []string {
	if len(t.Why) > 0 || t.Met() {
		return t.Why
	}
	if t.NotRun != "" {
		return []string{fmt.Sprintf("%s: not run: %s.", t.ID, t.NotRun)}
	}
	var out []string
	for i, p := range t.Pairs {
		if !pairMet(t, i) {
			out = append(out, t.ID+": "+PairGap(p, wantText(t, i)))
		}
	}
	for _, b := range t.Bounds {
		if !b.Met() {
			out = append(out, fmt.Sprintf("%s: %s %s %s > %s %s.", t.ID, b.Label, figure(b.Value), b.Unit, figure(b.Limit), b.Unit))
		}
	}
	for _, e := range t.Errors {
		out = append(out, fmt.Sprintf("%s: %s", t.ID, Trunc(e, 200)))
	}
	return out
}

// PairGap states a missed pair as figures: the ratio and its spread, and
// in the median run what mcpblob's figure would have had to be beside the
// reference's, and what it was.
func PairGap(p pair.Runs, want string) string {
	run, ok := medianRun(p)
	if !ok {
		return fmt.Sprintf("%s: no run measured both sides.", p.Label)
	}
	ours, ref := p.Ours[run], p.Ref[run]
	need := p.Want * ref
	if p.Lower && !p.Max {
		need = ref / p.Want
	}
	return fmt.Sprintf("%s = %s, want %s: in the median run (run %d) %s measured %s %s, so mcpblob needed %s %s; it measured %s.",
		p.Label, ratioText(p), want, run+1, p.RefName, Human(ref), p.Unit, Human(need), p.Unit, Human(ours))
}

// medianRun is the index of the run whose ratio is the median (the lower
// of the two middle ones for an even count); ok is false when no run has
// both figures.
func medianRun(p pair.Runs) (int, bool) {
	var idx []int
	for i, x := range p.Ratios() {
		if x > 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return 0, false
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p.Ratio(a), p.Ratio(b)) })
	return idx[(len(idx)-1)/2], true
}

// Targets writes the targets table and the miss lines.
func Targets(b *strings.Builder, ts []*pair.Target) {
	b.WriteString("| # | workload | target | measured: median ratio (min–max, runs) [medians] | verdict |\n|---|---|---|---|---|\n")
	for _, t := range ts {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", t.ID, t.Title, t.Goal, measuredText(t), Verdict(t))
	}
	b.WriteString("\nRatios are mcpblob ÷ reference measured side by side in the same run (a pair marked Lower, where smaller figures are better, is turned around to reference ÷ mcpblob, so bigger is better either way; a target written ≤ bounds the ratio from above); ✗ marks the figure that misses. Targets not met: why, and what would close them (generated from the figures).\n\n")
	n := 0
	for _, t := range ts {
		for _, w := range missLines(t) {
			fmt.Fprintf(b, "- %s\n", w)
			n++
		}
	}
	if n == 0 {
		b.WriteString("- (every measured target is met)\n")
	}
	b.WriteString("\n")
	for _, t := range ts {
		if len(t.Pairs) > 0 {
			fmt.Fprintf(b, "![%s](charts/%s)\n", t.ID, TargetChartName(t))
		}
	}
}

// TargetChartName is the file name of t's chart.
func TargetChartName(t *pair.Target) string { return "target-" + strings.ToLower(t.ID) + ".svg" }

// TargetChart draws every run of every pair as ratio ÷ wanted ratio, so
// the target is the line at 1 whatever the pair's scale.
func TargetChart(t *pair.Target) string {
	var rows []ratioRow
	for i, p := range t.Pairs {
		for r, x := range p.Ratios() {
			row := ratioRow{label: fmt.Sprintf("%s, run %d", shortLabel(p), r+1), text: "no figure"}
			if x > 0 && p.Want > 0 {
				row.value = x / p.Want
				row.met = (p.Max && x <= p.Want) || (!p.Max && x >= p.Want)
				row.text = fmt.Sprintf("%.2f× (want %s)", x, wantText(t, i))
			}
			rows = append(rows, row)
		}
	}
	return ratioChart(fmt.Sprintf("%s %s: each run's ratio against its target (line)", t.ID, t.Title), rows)
}

// shortLabel is the pair's reference, or its label when that is empty.
func shortLabel(p pair.Runs) string {
	if p.RefName != "" {
		return "vs " + p.RefName
	}
	return p.Label
}

// Positive is v without the figures that are not above 0.
func Positive(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
}

// ratioText is "0.72× (0.69–0.75×, 3 runs)", "0.72× (1 run)" or "n/a".
func ratioText(p pair.Runs) string {
	lo, med, hi, ok := p.Spread()
	n := len(Positive(p.Ratios()))
	switch {
	case !ok:
		return "n/a"
	case n == 1:
		return fmt.Sprintf("%.2f× (1 run)", med)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×, %d runs)", med, lo, hi, n)
}

// figure is a bound's value: whole numbers without decimals ("0 requests",
// "32 MiB"), others with 3 significant digits.
func figure(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return Human(v)
}

// Trunc puts s on one line and cuts it to n bytes, marking the cut.
func Trunc(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
