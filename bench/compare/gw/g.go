// Package gw is the gateway targets G1–G3 of bench/compare (issue 26).
package gw

// The gateway targets G1–G3 (issue 26): `mcpblob serve --upstream` in front
// of bench/peers/gosdk (an MCP server on go-sdk v1.8.0), each measured side
// by side in one run with its reference: the upstream alone (G1 latency, G2
// conversion), mcpblob's own server (G1 CPU per request) and nginx sendfile
// (G2 cache). G1 runs on pinned servers as P6 does (g1.go); G2 and G3 on
// unpinned ones as P2 does (g2.go, g3.go); the 2 GiB figure of an upstream
// that buffers is information beside them (gbuffer.go). The section is
// written between the "gateway" markers of RESULTS.md, so `-only G` renews it
// without touching the rest.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// gPlan is the sizes and counts of one G run.
type gPlan struct {
	stream, image    int64 // G2's blob, G3's image
	latN, latRuns    int   // G1: sequential requests per run, runs
	cpuRuns, cpuSecs int   // G1: fixed-rate runs per system and their length
	g2Runs           int   // G2 conversion runs
	g2Hits           int   // G2 pairs of a cache hit and an nginx GET (a pair takes a second, a conversion run a minute; pairs vary ±30 %, so 21)
	runs             int   // G3 runs
}

func planG(quick bool) gPlan {
	if quick {
		return gPlan{stream: 32 << 20, image: 16 << 20, latN: 300, latRuns: 2, cpuRuns: 1, cpuSecs: 4, g2Runs: 1, g2Hits: 1, runs: 1}
	}
	return gPlan{stream: 256 << 20, image: 64 << 20, latN: 2000, latRuns: 5, cpuRuns: 3, cpuSecs: 8, g2Runs: 5, g2Hits: 21, runs: 3}
}

// The G blobs, files of the upstream's -dir (blob:///{key}).
const (
	gKeySmall  = "bench-4KiB" // readSizes[0].key(): the load scenarios' default key
	gKeyStream = "bench-g2"
	// gKeyStoreCopy is the stream cache's copy of gKeyStream, hard-linked
	// into nginx's folder for G2's cache rounds.
	gKeyStoreCopy = "bench-g2-store"
	gKeyImage     = "bench-g3"
)

// Report is one G run: the targets and the information beside them.
type Report struct {
	started  time.Time
	elapsed  time.Duration
	load     string // /proc/loadavg when the run started
	steal    float64
	quick    bool
	plan     gPlan
	targets  []*pair.Target
	buffer   *bufferResult
	setupErr string
}

// Run measures G1–G3 (the servers built into cfg.Bins) in work.
func Run(ctx context.Context, cfg *Options, work string) *Report {
	g := &Report{started: time.Now().UTC(), quick: cfg.Quick, plan: planG(cfg.Quick), load: sysinfo.LoadAvg()}
	bins := cfg.Bins
	cpu0 := sysinfo.ReadCPUTimes()
	dir := filepath.Join(work, "g")
	sums, err := seedG(dir, g.plan)
	if err != nil {
		g.setupErr = err.Error()
	} else {
		files := filepath.Join(dir, "files")
		g.targets = append(g.targets, runG1(ctx, cfg, dir, files, g.plan))
		g.targets = append(g.targets, runG23(ctx, cfg, dir, bins, files, g.plan, sums)...)
		if !cfg.Quick {
			g.buffer = runBuffer(ctx, cfg, dir, bins)
		}
	}
	g.elapsed = time.Since(g.started)
	g.steal = sysinfo.StealSince(cpu0)
	return g
}

// seedG writes the G blobs as the upstream's files and returns their sha256 by key.
func seedG(dir string, p gPlan) (map[string]string, error) {
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return nil, err
	}
	measure.Logf("G: seeding %d MiB and %d MiB", p.stream>>20, p.image>>20)
	sums := map[string]string{}
	for key, n := range map[string]int64{gKeySmall: 4 << 10, gKeyStream: p.stream, gKeyImage: p.image} {
		sum, err := seed.File(filepath.Join(files, key), n)
		if err != nil {
			return nil, err
		}
		sums[key] = sum
	}
	return sums, nil
}

// Render is the body of RESULTS.md's gateway section.
func (g *Report) Render(commit string) string {
	var b strings.Builder
	b.WriteString("## Gateway targets (G1–G3, issue 26)\n\n")
	b.WriteString("Written by bench/compare (`make bench-compare`, or `go run ./compare -only G` for this section alone); no number here is typed by hand. ")
	b.WriteString("`mcpblob serve --upstream` in front of bench/peers/gosdk, an MCP server on go-sdk v1.8.0 as an SDK user writes it (every resource read whole and sent as base64; a tool returning an image); each figure measured side by side in the same run with its reference. How: [README.md](README.md#gateway-targets-g1g3).\n\n")
	if g.quick {
		b.WriteString("> **-quick run**: 32 MiB for G2, 16 MiB for G3, one or two runs per pair; a harness check, not a result.\n\n")
	}
	fmt.Fprintf(&b, "- date: %s; wall time %v; commit %s\n", g.started.Format("2006-01-02 15:04 UTC"), g.elapsed.Round(time.Second), commit)
	fmt.Fprintf(&b, "- load average when the run started: %s (on %d CPUs; above about 0.5 other jobs shared the machine, and every figure here, the references' too, was measured beside them); CPU steal %.1f %%\n\n", g.load, sysinfo.Cores(), g.steal)
	if g.setupErr != "" {
		fmt.Fprintf(&b, "Not run: %s.\n", g.setupErr)
		return b.String()
	}
	render.Targets(&b, g.targets)
	for _, t := range g.targets {
		fmt.Fprintf(&b, "\n### %s: %s\n\nTarget: %s. Verdict: %s.\n\n", t.ID, t.Title, t.Goal, render.Verdict(t))
		if t.Detail != "" {
			b.WriteString(t.Detail + "\n")
		}
		if t.NotRun != "" {
			fmt.Fprintf(&b, "Not run: %s.\n", t.NotRun)
		}
	}
	if g.buffer != nil {
		b.WriteString("\n" + g.buffer.render())
	}
	return b.String()
}

// WriteCharts draws the G targets' charts into dir.
func (g *Report) WriteCharts(dir string) error {
	for _, t := range g.targets {
		if len(t.Pairs) > 0 {
			if err := render.WriteChart(dir, render.TargetChartName(t), render.TargetChart(t)); err != nil {
				return err
			}
		}
	}
	return nil
}
