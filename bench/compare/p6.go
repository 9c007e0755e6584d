package main

import (
	"context"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/load"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// P6 runs on its own servers, pinned (p6rig.go): first at saturation under
// wrk (p6sat.go, the verdict), then at a fixed rate under vegeta, whose CPU
// per request is information beside it.

// runP6 starts P6's pinned servers, measures them and stops them.
func runP6(ctx context.Context, cfg *config, work string, bins map[string]string, rep *report) {
	if why := p6Missing(sysinfo.Cores()); why != "" {
		rep.p6Err = why
		measure.Logf("P6: %s", why)
		return
	}
	g, err := startP6Rig(ctx, work, bins)
	if err != nil {
		rep.p6Err = render.Trunc(err.Error(), 300)
		measure.Logf("P6: %v", err)
		return
	}
	defer g.stop()
	rep.p6sat = p6Saturate(ctx, cfg, g)
	rep.p6fixed = p6Fixed(ctx, cfg, g.systems)
}

// p6step is one constant-arrival-rate run of the mixed load (or of the
// static GETs, for the plain file servers).
type p6step struct {
	target   int     // requested requests per second
	achieved float64 // requests sent per second
	p99      float64 // ms, over the run's requests
	failed   float64 // share of requests with an error class
	dropped  float64 // requests asked for but not sent in the run's time
	count    float64 // requests sent
	cpu      float64 // µs of the server's CPU time per request (user + system)
	gencpu   float64 // µs of the load generator's (this process's) CPU time per request
	ok       bool
	why      string
}

// p6Scenario is the P6 load for s (loadtest/rig/load): the mixed MCP
// load, or GETs of the same 4 KiB file for nginx and the floor.
func p6Scenario(s *system) string {
	if s.plain {
		return "static-get"
	}
	return "mixed"
}

// p6Trial runs one constant-arrival-rate vegeta run of seconds at rate
// against s and reads the server's CPU time around it.
func p6Trial(ctx context.Context, cfg *config, s *system, rate, seconds int, tag string) (p6step, error) {
	dir := filepath.Join(cfg.repo, "loadtest", "results")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p6step{}, err
	}
	sc, err := load.New(ctx, p6Scenario(s), load.Params{
		Base: s.base, Key: readSizes[0].key(), Size: readSizes[0].n,
		Rate: rate, Duration: time.Duration(seconds) * time.Second,
		Workers: uint64(max(20, rate/50)), MaxWorkers: uint64(max(100, rate/5)),
		P99: time.Duration(p6P99 * float64(time.Millisecond)),
	})
	if err != nil {
		return p6step{}, err
	}
	cpu0, cerr := sysinfo.ProcCPU(s.pid())
	rep := load.Run(ctx, sc)
	cpu1, cerr1 := sysinfo.ProcCPU(s.pid())
	if err := rep.Write(dir, fmt.Sprintf("p6-%s-%s-%d", strings.ReplaceAll(s.name, " ", "-"), tag, rate)); err != nil {
		return p6step{}, err
	}
	st := p6step{
		target:   rate,
		achieved: rep.Metrics.Rate,
		p99:      float64(rep.P99()) / float64(time.Millisecond),
		count:    float64(rep.Requests()),
		ok:       rep.OK(),
	}
	asked := float64(rate * seconds)
	st.dropped = max(0, asked-st.count)
	if st.count > 0 {
		st.failed = float64(rep.Failed) / st.count
		st.gencpu = float64(rep.CPU) / float64(time.Microsecond) / st.count
		if cerr == nil && cerr1 == nil {
			st.cpu = float64(cpu1-cpu0) / float64(time.Microsecond) / st.count
		}
	}
	switch {
	case !st.ok:
		st.why = fmt.Sprint(rep.FailedThresholds())
	case st.dropped > 0.01*asked:
		st.ok, st.why = false, fmt.Sprintf("%.0f requests not sent (the load generator could not keep up)", st.dropped)
	case st.achieved < 0.95*float64(rate):
		st.ok, st.why = false, fmt.Sprintf("achieved %.0f/s", st.achieved)
	}
	measure.Logf("  P6 %s @%d/s %s: %.0f req/s, p99 %.2f ms, failed %.4f, server CPU %.0f µs/req, vegeta CPU %.0f µs/req, ok %v %s", s.name, rate, tag, st.achieved, st.p99, st.failed, st.cpu, st.gencpu, st.ok, st.why)
	return st, nil
}

// p6FixedRate is P6's information beside the saturation verdict: each
// system at the same fixed rate, runs alternating between the systems.
type p6FixedRate struct {
	rate, seconds int
	systems       []string
	runs          map[string][]p6step
	errs          []string
}

const (
	p6Rate         = 1800 // req/s, the fixed rate of P6's information run (docs/design.md)
	p6FixedSeconds = 8
	p6FixedRuns    = 3
)

// p6Floor is the name of P6's front-end floor: bench/peers/fasthttpfile,
// a bare fasthttp server reading the same file per request.
const p6Floor = "fasthttp floor"

// p6Fixed runs the P6 systems at p6Rate in turns (each round
// starting one system further along) and records every run.
func p6Fixed(ctx context.Context, cfg *config, systems []*system) *p6FixedRate {
	res := &p6FixedRate{rate: p6Rate, seconds: p6FixedSeconds, runs: map[string][]p6step{}}
	rounds := p6FixedRuns
	if cfg.quick {
		rounds, res.seconds = 1, 4
	}
	for _, s := range systems {
		res.systems = append(res.systems, s.name)
	}
	measure.Logf("P6 fixed rate %d/s, %d runs of %d s per system", res.rate, rounds, res.seconds)
	for r := range rounds {
		for i := range systems {
			s := systems[(i+r)%len(systems)]
			if ctx.Err() != nil {
				return res
			}
			st, err := p6Trial(ctx, cfg, s, res.rate, res.seconds, fmt.Sprintf("fixed%d", r+1))
			if err != nil {
				res.errs = append(res.errs, fmt.Sprintf("%s: %s", s.name, render.Trunc(err.Error(), 200)))
				continue
			}
			res.runs[s.name] = append(res.runs[s.name], st)
		}
	}
	return res
}

// cpuRuns is a system's server CPU per request by run.
func (f *p6FixedRate) cpuRuns(name string) []float64 {
	var out []float64
	for _, st := range f.runs[name] {
		out = append(out, st.cpu)
	}
	return out
}
