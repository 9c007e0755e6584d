package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/load"
	"github.com/mcpblob/mcpblob/bench/internal/proc"
	"github.com/mcpblob/mcpblob/bench/internal/sysinfo"
)

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
	trials   int // runs at this rate
	passes   int // of which passed
}

// p6Result is the highest rate one system sustained with p99 < 10 ms and no errors.
type p6Result struct {
	system string
	best   *p6step
	steps  []p6step
	err    string
}

const (
	p6P99       = 10.0 // ms, P6's p99 bound
	p6Duration  = 5    // seconds per ladder run
	p6MinTarget = 800
	p6MaxTarget = 12800
	p6Bisect    = 2 // bisection steps after the doubling ladder
	// p6LadderTime is about what the ladder takes (two systems, ~6 steps
	// each of a 5 s run): it runs only when that is left.
	p6LadderTime = 2 * time.Minute
)

// p6Scenario is the P6 load for s (bench/internal/load): the mixed MCP
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
	logf("  P6 %s @%d/s %s: %.0f req/s, p99 %.2f ms, failed %.4f, server CPU %.0f µs/req, vegeta CPU %.0f µs/req, ok %v %s", s.name, rate, tag, st.achieved, st.p99, st.failed, st.cpu, st.gencpu, st.ok, st.why)
	return st, nil
}

// p6FixedRate is P6's counted measurement: each system at the same fixed
// rate, runs alternating between the systems.
type p6FixedRate struct {
	rate, seconds int
	systems       []string
	runs          map[string][]p6step
	errs          []string
}

const (
	p6Rate         = 1800 // req/s, inside the 1,500–2,000 the target was set for
	p6FixedSeconds = 8
	p6FixedRuns    = 3
)

// p6Floor is the name of P6's front-end floor: bench/peers/fasthttpfile,
// a bare fasthttp server reading the same file per request.
const p6Floor = "fasthttp floor"

// p6Systems is what P6 measures: mcpblob, go-sdk, nginx and the fasthttp
// floor, started here (from bin, serving files) because no other target
// uses it; stop stops it. Without it P6 still runs, and the report says
// why the floor is missing.
func p6Systems(systems []*system, bin, files string, rep *report) (list []*system, stop func()) {
	for _, s := range systems {
		if s.name == "mcpblob" || s.name == "go-sdk" || s.name == "nginx" {
			list = append(list, s)
		}
	}
	addr, err := proc.FreeAddr()
	if err == nil {
		var p *proc.Proc
		if p, err = proc.Start("fasthttpfile", "http://"+addr+"/readyz", bin, []string{"-dir", files, "-listen", addr}); err == nil {
			return append(list, &system{name: p6Floor, note: "bench/peers/fasthttpfile: fasthttp alone, reading the file per request (P6 only)", proc: p, base: "http://" + addr, plain: true}), p.Stop
		}
	}
	rep.p6FloorErr = err.Error()
	logf("P6 floor: %v", err)
	return list, func() {}
}

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
	logf("P6 fixed rate %d/s, %d runs of %d s per system", res.rate, rounds, res.seconds)
	for r := range rounds {
		for i := range systems {
			s := systems[(i+r)%len(systems)]
			if ctx.Err() != nil {
				return res
			}
			st, err := p6Trial(ctx, cfg, s, res.rate, res.seconds, fmt.Sprintf("fixed%d", r+1))
			if err != nil {
				res.errs = append(res.errs, fmt.Sprintf("%s: %s", s.name, trunc(err.Error(), 200)))
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

// p6Ladder climbs a doubling ladder of arrival rates (then bisects the
// bracket) for mcpblob and go-sdk in alternation, one run per step: the
// highest rate each sustains with p99 < 10 ms on these shared cores, as
// information beside the fixed-rate CPU figures.
func p6Ladder(ctx context.Context, cfg *config, systems []*system, deadline time.Time) []*p6Result {
	var targets []*system
	for _, s := range systems {
		if s.name == "mcpblob" || s.name == "go-sdk" {
			targets = append(targets, s)
		}
	}
	res := make([]*p6Result, len(targets))
	for i, s := range targets {
		res[i] = &p6Result{system: s.name}
	}
	step := func(i, rate int) {
		st, err := p6Trial(ctx, cfg, targets[i], rate, p6Duration, "ladder")
		if err != nil {
			res[i].err = err.Error()
			return
		}
		st.trials, st.passes = 1, 0
		if st.ok {
			st.passes = 1
		}
		res[i].steps = append(res[i].steps, st)
		if st.ok && (res[i].best == nil || st.target > res[i].best.target) {
			cp := st
			res[i].best = &cp
		}
	}
	logf("P6 req/s ladder (information)")
	lo, hi := make([]int, len(targets)), make([]int, len(targets))
	over := func(i int) bool { return res[i].err != "" || ctx.Err() != nil || time.Now().After(deadline) }
	last := func(i int) bool { n := len(res[i].steps); return n > 0 && res[i].steps[n-1].ok }
	for rate := p6MinTarget; rate <= p6MaxTarget; rate *= 2 {
		for i := range targets {
			if hi[i] != 0 || over(i) {
				continue
			}
			step(i, rate)
			if last(i) {
				lo[i] = rate
			} else {
				hi[i] = rate
			}
		}
	}
	for range p6Bisect {
		for i := range targets {
			if hi[i] == 0 || lo[i] == 0 || over(i) || hi[i]-lo[i] <= lo[i]/8 {
				continue
			}
			mid := (lo[i] + hi[i]) / 2 / 50 * 50
			step(i, mid)
			if last(i) {
				lo[i] = mid
			} else {
				hi[i] = mid
			}
		}
	}
	return res
}
