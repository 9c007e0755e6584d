package main

import (
	"context"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// P3: resources/stream direct against nginx sendfile of the same bytes,
// with the page-cache residency of both copies read before every run.
// mcpblob's copy is written through the local store, whose writer drops
// each chunk it has written from the page cache; nginx's copy is written by
// the harness through the cache. Left as found, the two start in different
// states, so the harness runs one pair as found (to show the effect), then
// the counted runs with both copies warmed, then one with both dropped.

const (
	p3AsFound = "as found"
	p3Warm    = "both warm"
	p3Cold    = "both cold"
)

// p3Run is one P3 repetition: the cache state of both copies before it and
// each side's figures.
type p3Run struct {
	state           string
	resOurs, resRef float64 // share of each copy's pages resident before the run
	ours, ref       sample
	cpuOurs, cpuRef time.Duration // server CPU time during each transfer
}

func (r p3Run) ratio() float64 {
	if r.ours.mbps <= 0 || r.ref.mbps <= 0 {
		return 0
	}
	return r.ours.mbps / r.ref.mbps
}

// p3Result is P3's outcome.
type p3Result struct {
	size        int64
	runs        []p3Run
	table       *table // the warm runs, SeaweedFS beside them as information
	unavailable string
	err         string
}

// p3Counted is how many warm runs P3 counts (each must meet the target).
const p3Counted = 3

// runP3 seeds a 1 GiB blob into the store (restarting mcpblob on the same
// address) and beside it for nginx, then runs the as-found, warm and cold
// repetitions.
func runP3(ctx context.Context, cfg *config, work string, bins map[string]string, by map[string]*system) *p3Result {
	size := int64(1 << 30)
	if cfg.quick {
		size = 256 << 20
	}
	res := &p3Result{size: size}
	key := "bench-stream"
	measure.Logf("P3 resources/stream %d MiB", size>>20)
	ours, theirs := filepath.Join(work, "data", key), filepath.Join(work, "files", key)
	streamer, err := restartWithStreamBlob(ctx, bins, by["mcpblob"], filepath.Join(work, "data"), key, size)
	if err == nil {
		_, err = seed.File(theirs, size)
	}
	ng := by["nginx"]
	if err == nil && ng == nil {
		err = fmt.Errorf("nginx is not running: no reference")
	}
	if err != nil {
		res.err = err.Error()
		return res
	}
	list := []*system{streamer, ng}
	if sw := by["SeaweedFS"]; sw != nil {
		if err := sw.s3.put(ctx, key, theirs); err != nil {
			measure.Logf("P3: SeaweedFS upload: %v", err)
		} else {
			list = append(list, sw)
		}
	}
	measure.SettleDisk()
	buf := make([]byte, 256<<10)
	one := func(s *system) (sample, time.Duration) { return p3Once(ctx, s, key, size, buf) }
	pairRun := func(state string, r int) p3Run {
		run := p3Run{state: state}
		run.resOurs, _ = measure.Residency(ours)
		run.resRef, _ = measure.Residency(theirs)
		if r%2 == 0 {
			run.ours, run.cpuOurs = one(streamer)
			run.ref, run.cpuRef = one(ng)
		} else {
			run.ref, run.cpuRef = one(ng)
			run.ours, run.cpuOurs = one(streamer)
		}
		measure.Logf("  P3 %s: mcpblob %.0f MB/s (%.0f %% cached), nginx %.0f MB/s (%.0f %% cached)", state, run.ours.mbps, 100*run.resOurs, run.ref.mbps, 100*run.resRef)
		return run
	}
	res.runs = append(res.runs, pairRun(p3AsFound, 0))
	samples := make([][]sample, len(list))
	for r := range p3Counted {
		if ctx.Err() != nil {
			break
		}
		for _, p := range []string{ours, theirs} {
			if err := measure.WarmFile(p); err != nil {
				res.err = err.Error()
				return res
			}
		}
		run := pairRun(p3Warm, r)
		res.runs = append(res.runs, run)
		samples[0] = append(samples[0], run.ours)
		samples[1] = append(samples[1], run.ref)
		for i := 2; i < len(list); i++ {
			smp, _ := one(list[i])
			samples[i] = append(samples[i], smp)
		}
	}
	res.table = summarize("P3", "resources/stream", size, list, samples)
	if ctx.Err() == nil && measure.DropFile(ours) == nil && measure.DropFile(theirs) == nil {
		res.runs = append(res.runs, pairRun(p3Cold, 0))
	}
	return res
}

// restartWithStreamBlob stops mcpblob, seeds key into its store, starts it
// again on the same address and opens a session that accepts streams of
// size bytes.
func restartWithStreamBlob(ctx context.Context, bins map[string]string, mb *system, data, key string, size int64) (*system, error) {
	addr := strings.TrimPrefix(mb.base, "http://")
	mb.proc.Stop()
	if _, err := seed.Store(data, seed.Blob{Key: key, Size: size}); err != nil {
		return nil, err
	}
	p, err := proc.Start("mcpblob", mb.base+"/readyz", bins["mcpblob"], []string{"serve", "--data", data, "--listen", addr})
	if err != nil {
		return nil, err
	}
	mb.proc = p
	mb.mcp = mcpc.New(mb.base + "/mcp")
	if err := mb.mcp.Init(ctx, map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": size}}); err != nil {
		return nil, err
	}
	return &system{name: "mcpblob", proc: p, base: mb.base, baseline: mb.baseline, mcp: mb.mcp}, nil
}

// p3Once is one timed transfer of key from s, with the peak RSS and the
// CPU time s's process spent on it.
func p3Once(ctx context.Context, s *system, key string, size int64, buf []byte) (sample, time.Duration) {
	cpu0, _ := sysinfo.ProcCPU(s.pid())
	w := measure.WatchPeak(s.pid())
	t0 := time.Now()
	var err error
	var ttfb time.Duration
	if s.mcp != nil {
		ttfb, err = streamOnce(ctx, s.mcp, key, size, buf)
	} else {
		_, ttfb, err = s.fetch(ctx, key, size, buf)
	}
	el := time.Since(t0)
	smp := sample{peak: w.End(), ttfb: ttfb, err: err}
	cpu1, _ := sysinfo.ProcCPU(s.pid())
	if err == nil {
		smp.mbps = measure.MBps(size, el)
	}
	return smp, cpu1 - cpu0
}

// p3Target is P3 as a pair.Target: the warm runs, each of which must meet
// 0.9×, and the RSS bound.
func (r *report) p3Target() *pair.Target {
	t := &pair.Target{ID: "P3", Title: "resources/stream direct, 1 GiB", Goal: "≥ 0.9× nginx sendfile in each of 3 runs (both copies in the same page-cache state); RSS growth ≤ 32 MiB", EveryRun: []bool{true}}
	res := r.p3
	if res != nil && res.size > 0 && res.size != 1<<30 {
		t.Title = fmt.Sprintf("resources/stream direct, %d MiB", res.size>>20)
	}
	switch {
	case res == nil:
		t.NotRun = "time budget"
		return t
	case res.unavailable != "":
		t.NotRun = res.unavailable
		return t
	case res.err != "":
		t.Errors = append(t.Errors, res.err)
		return t
	}
	p := pair.Runs{Label: "stream ÷ nginx, both warm", Unit: "MB/s", RefName: "nginx", Want: 0.9}
	var growth int64
	for _, run := range res.runs {
		if run.state != p3Warm {
			continue
		}
		p.Ours = append(p.Ours, run.ours.mbps)
		p.Ref = append(p.Ref, run.ref.mbps)
		if run.ours.err != nil {
			t.Errors = append(t.Errors, "mcpblob: "+run.ours.err.Error())
		}
		if run.ref.err != nil {
			t.Errors = append(t.Errors, "nginx: "+run.ref.err.Error())
		}
		if run.ours.peak > 0 && r.mcpblobBaseline() > 0 {
			growth = max(growth, run.ours.peak-r.mcpblobBaseline())
		}
	}
	t.Pairs = []pair.Runs{p}
	t.Bounds = []pair.Bound{{Label: "RSS growth", Value: float64(max(growth, 0)) / (1 << 20), Limit: 32, Unit: "MiB"}}
	if !p.EveryRun() && len(t.Errors) == 0 {
		t.Why = append(t.Why, "P3: "+render.PairGap(p, "≥ 0.9× in every run")+" "+res.cpuFinding())
	}
	if !t.Bounds[0].Met() {
		t.Why = append(t.Why, fmt.Sprintf("P3: RSS grew by %.0f MiB > 32 MiB: the direct path buffers instead of handing the file to the socket.", t.Bounds[0].Value))
	}
	t.Detail = res.detail()
	return t
}

func (r *report) mcpblobBaseline() int64 {
	for _, s := range r.systems {
		if s.name == "mcpblob" {
			return s.baseline
		}
	}
	return 0
}

// runsIn are the runs in one cache state.
func (res *p3Result) runsIn(state string) []p3Run {
	var out []p3Run
	for _, r := range res.runs {
		if r.state == state {
			out = append(out, r)
		}
	}
	return out
}

// cpuPerGiB is the median server CPU seconds per GiB sent over the warm runs.
func (res *p3Result) cpuPerGiB() (ours, ref float64) {
	var o, f []float64
	gib := float64(res.size) / (1 << 30)
	for _, r := range res.runsIn(p3Warm) {
		o = append(o, r.cpuOurs.Seconds()/gib)
		f = append(f, r.cpuRef.Seconds()/gib)
	}
	return measure.Median(o), measure.Median(f)
}

// cpuFinding says whether the CPU per byte points at a copy through user
// space.
func (res *p3Result) cpuFinding() string {
	o, f := res.cpuPerGiB()
	if o <= 0 || f <= 0 {
		return "Server CPU per GiB was too small to read (10 ms ticks)."
	}
	if o > 1.5*f {
		return fmt.Sprintf("mcpblob spent %.2f s of CPU per GiB against nginx's %.2f s (%.1f×): the bytes go through user space (read and write instead of sendfile); what would close it: hand the *os.File to the socket's sendfile path with nothing buffered in front of it.", o, f, o/f)
	}
	return fmt.Sprintf("mcpblob spent %.2f s of CPU per GiB against nginx's %.2f s (%.1f×), so the bytes do not go through user space; with the cache state equal, what remains is scheduling on 2 shared cores (the client reads on the same cores).", o, f, o/f)
}

// detail is P3's section body: the runs with the residency of both copies,
// the finding, and the throughput table of the warm runs.
func (res *p3Result) detail() string {
	var b strings.Builder
	b.WriteString("Page-cache residency of each copy is read with mincore(2) on a mapping of the file just before each run. One pair runs with the copies as the seeding left them, then the counted runs after reading both files through the cache, then one pair after dropping both (sync, fadvise DONTNEED). Server CPU: the serving process's user + system time during the transfer.\n\n")
	b.WriteString("| run | cache state | mcpblob copy cached | nginx copy cached | mcpblob MB/s | nginx MB/s | mcpblob ÷ nginx | mcpblob CPU | nginx CPU |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for i, r := range res.runs {
		fmt.Fprintf(&b, "| %d | %s | %.0f %% | %.0f %% | %s | %s | %.2f× | %.2f s | %.2f s |\n", i+1, r.state, 100*r.resOurs, 100*r.resRef, render.Human(r.ours.mbps), render.Human(r.ref.mbps), r.ratio(), r.cpuOurs.Seconds(), r.cpuRef.Seconds())
	}
	b.WriteString("\n**Finding** (generated from the figures above): " + res.finding() + "\n")
	if res.table != nil {
		b.WriteString("\nThe warm runs, SeaweedFS's presigned GET of the same object beside them (information):\n\n")
		renderTable(&b, res.table, "")
	}
	return b.String()
}

// finding explains, from the residency and the ratios, why P3 can fall
// below 0.9× and whether the fair comparison holds.
func (res *p3Result) finding() string {
	var parts []string
	found := res.runsIn(p3AsFound)
	var warm []float64
	minRes := 1.0
	for _, r := range res.runsIn(p3Warm) {
		warm = append(warm, r.ratio())
		minRes = min(minRes, r.resOurs, r.resRef)
	}
	lo, med, hi, okWarm := pair.Stats(render.Positive(warm))
	if len(found) > 0 {
		f := found[0]
		parts = append(parts, fmt.Sprintf("before the first run mcpblob's copy (written through the store, whose writer drops each written chunk from the page cache) was %.0f %% cached and nginx's copy (written through the cache) %.0f %%; that pair gave %.2f× (mcpblob %s MB/s, nginx %s MB/s).", 100*f.resOurs, 100*f.resRef, f.ratio(), render.Human(f.ours.mbps), render.Human(f.ref.mbps)))
	}
	if okWarm {
		parts = append(parts, fmt.Sprintf("With both copies read into the cache first (≥ %.0f %% cached), the %d counted runs gave %.2f–%.2f× (median %.2f×).", 100*minRes, len(render.Positive(warm)), lo, hi, med))
		if lo < 0.9 {
			parts = append(parts, fmt.Sprintf("A run fell to %.2f× with both copies cached: that fall is not a cache effect; the CPU figures below say whether it is a copy, otherwise it is the 2 shared cores (client, server and other processes; the steal share is in the header).", lo))
		}
	}
	if cold := res.runsIn(p3Cold); len(cold) > 0 {
		c := cold[0]
		parts = append(parts, fmt.Sprintf("With both dropped (%.0f %% and %.0f %% cached): %.2f× (mcpblob %s MB/s, nginx %s MB/s), both at the disk's pace.", 100*c.resOurs, 100*c.resRef, c.ratio(), render.Human(c.ours.mbps), render.Human(c.ref.mbps)))
	}
	parts = append(parts, res.cpuFinding())
	if len(found) > 0 && okWarm {
		f := found[0]
		gap := f.resRef - f.resOurs
		switch {
		case gap > 0.5 && f.ratio() < 0.9 && med >= 0.9:
			parts = append(parts, fmt.Sprintf("So the as-found fall below 0.9× comes from the page cache, not from the transfer path: left as found, mcpblob reads its copy from the disk while nginx's is in memory (%.0f points apart). The counted runs therefore start with both copies cached.", 100*gap))
		case gap > 0.2:
			parts = append(parts, fmt.Sprintf("The copies started %.0f points apart in the cache; as found the pair gave %.2f× against the warm median %.2f×.", 100*gap, f.ratio(), med))
		default:
			parts = append(parts, fmt.Sprintf("The copies started in a similar cache state (%.0f points apart), so this run cannot show a cache effect; the as-found and warm ratios (%.2f× and %.2f×) differ by the VM's noise.", 100*gap, f.ratio(), med))
		}
	}
	return strings.Join(parts, " ")
}
