package gw

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

func TestG1TargetFromFigures(t *testing.T) {
	res := &g1Result{
		direct: map[string][]float64{"resources/read 4 KiB": {0.30, 0.32, 0.31}, "tools/list": {0.20, 0.20, 0.20}},
		via:    map[string][]float64{"resources/read 4 KiB": {0.50, 0.70, 0.55}, "tools/list": {0.40, 0.45, 0.50}},
		cpu:    map[string][]float64{"gateway": {100, 110, 90}, "mcpblob": {120, 120, 120}},
		p99:    map[string][]float64{},
	}
	tg := res.target(&pair.Target{ID: "G1"}, 10)
	if got := tg.Bounds[0].Value; got < 0.239 || got > 0.241 { // added per run 0.20, 0.38, 0.24: median 0.24
		t.Fatalf("added p50 of the read = %v, want the median run's 0.24", got)
	}
	if got := tg.Bounds[1].Value; got < 0.249 || got > 0.251 {
		t.Fatalf("added p50 of tools/list = %v, want 0.25", got)
	}
	if !tg.Met() {
		t.Fatalf("every figure within its target: want met, got why %q", tg.Why)
	}
	res.cpu["gateway"] = []float64{200, 210, 190}
	if tg := res.target(&pair.Target{ID: "G1"}, 10); tg.Met() || len(tg.Why) == 0 {
		t.Fatal("a gateway spending more CPU per request than mcpblob must miss, with a line saying why")
	}
}

func TestBufferRender(t *testing.T) {
	stopped := (&bufferResult{limit: 12 << 30, peak: 12 << 30, stopped: true, at: 159 * time.Second}).render()
	if !strings.Contains(stopped, "before it had sent a byte") || !strings.Contains(stopped, "159.0 s") {
		t.Fatalf("a stopped run must say when, and that no byte came: %s", stopped)
	}
	served := (&bufferResult{limit: 12 << 30, baseline: 10 << 20, peak: 8 << 30, at: 40 * time.Second, ttfb: 30 * time.Second}).render()
	if !strings.Contains(served, "The upstream served it") {
		t.Fatalf("a run that finished must give its peak: %s", served)
	}
}
