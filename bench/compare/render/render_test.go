package render

import (
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

func TestMissLinesGeneratedForEveryMiss(t *testing.T) {
	tg := &pair.Target{ID: "P9", Title: "t", Pairs: []pair.Runs{
		{Label: "a", Unit: "MB/s", Ours: []float64{50, 60, 70}, Ref: []float64{100, 100, 100}, RefName: "ref", Want: 0.8},
		{Label: "b", Unit: "µs/request", Ours: []float64{100}, Ref: []float64{60}, RefName: "cheap", Want: 0.5, Lower: true},
	}, Bounds: []pair.Bound{{Label: "RSS growth", Value: 200, Limit: 128, Unit: "MiB"}}}
	lines := missLines(tg)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2 (the missed ratio and the bound): %q", len(lines), lines)
	}
	if !strings.Contains(lines[0], "(run 2) ref measured 100 MB/s, so mcpblob needed 80.0 MB/s; it measured 60.0") {
		t.Errorf("ratio line does not state the needed and measured figures: %s", lines[0])
	}
	if !strings.Contains(lines[1], "200 MiB > 128 MiB") {
		t.Errorf("bound line: %s", lines[1])
	}
	if Verdict(tg) != "**missed**" {
		t.Errorf("verdict %q", Verdict(tg))
	}
}

func TestEveryRunRuleDecidesThePair(t *testing.T) {
	tg := &pair.Target{ID: "P3", Pairs: []pair.Runs{{Ours: []float64{95, 95, 80}, Ref: []float64{100, 100, 100}, Want: 0.9}}, EveryRun: []bool{true}}
	if pairMet(tg, 0) || tg.Met() {
		t.Fatal("a run at 0.8× must miss an every-run target even with a 0.95× median")
	}
	if got := measuredText(tg); !strings.Contains(got, "0.95× (0.80–0.95×, 3 runs)") || !strings.Contains(got, "✗") {
		t.Errorf("measured cell %q", got)
	}
}

func TestTargetChartDrawsEveryRunAndTheLine(t *testing.T) {
	tg := &pair.Target{ID: "P2", Title: "x", Pairs: []pair.Runs{
		{Ours: []float64{1, 2}, Ref: []float64{2, 2}, RefName: "nginx", Want: 0.7},
		{Ours: []float64{30}, Ref: []float64{1}, RefName: "go-sdk", Want: 30},
	}}
	svg := TargetChart(tg)
	if n := strings.Count(svg, "<rect x="); n != 3 {
		t.Errorf("%d bars, want one per run (3)", n)
	}
	if !strings.Contains(svg, "vs nginx, run 2") || !strings.Contains(svg, ">target<") {
		t.Error("missing run label or target line")
	}
}

func TestSortTargetsByNumber(t *testing.T) {
	ts := []*pair.Target{{ID: "P10"}, {ID: "P2"}, {ID: "P9"}, {ID: "P1"}}
	SortTargets(ts)
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	if got := strings.Join(ids, ","); got != "P1,P2,P9,P10" {
		t.Fatalf("order %s", got)
	}
}
