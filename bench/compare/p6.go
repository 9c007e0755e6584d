package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/k6"
	"github.com/mcpblob/mcpblob/bench/internal/proc"
	"github.com/mcpblob/mcpblob/bench/internal/sysinfo"
)

// k6step is one constant-arrival-rate run of loadtest/mixed.js.
type k6step struct {
	target   int     // requested iterations (= requests) per second
	achieved float64 // http_reqs rate
	p99      float64 // ms, over the mixed scenario's requests
	failed   float64 // http_req_failed rate
	dropped  float64 // dropped_iterations count
	count    float64 // http_reqs count
	cpu      float64 // µs of the server's CPU time per request (user + system)
	k6cpu    float64 // µs of k6's own CPU time per request
	ok       bool
	why      string
	trials   int // runs at this rate
	passes   int // of which passed
}

// p6Result is the highest rate one system sustained with p99 < 10 ms and no errors.
type p6Result struct {
	system string
	best   *k6step
	steps  []k6step
	err    string
}

const (
	p6P99       = 10.0 // ms, issue 15 P6
	p6Duration  = 5    // seconds per ladder run
	p6MinTarget = 800
	p6MaxTarget = 12800
	p6Bisect    = 2 // bisection steps after the doubling ladder
	// p6LadderTime is about what the ladder takes (two systems, ~6 steps
	// each of a 5 s run plus k6's start): it runs only when that is left.
	p6LadderTime = 2 * time.Minute
)

// k6Load is what one k6 run sends to one system: the script and the
// scenario whose request durations the p99 is taken over.
type k6Load struct {
	script, scenario string
}

// p6Load is the P6 load for s: the mixed MCP load, or GETs of the same
// 4 KiB file for nginx.
func p6Load(cfg *config, s *system) k6Load {
	if s.plain {
		return k6Load{filepath.Join(cfg.repo, "loadtest", "static-get.js"), "static"}
	}
	return k6Load{filepath.Join(cfg.repo, "loadtest", "mixed.js"), "mixed"}
}

// k6Trial runs one constant-arrival-rate k6 run of seconds at rate against
// s and reads the server's CPU time around it.
func k6Trial(ctx context.Context, cfg *config, s *system, rate, seconds int, tag string) (k6step, error) {
	load := p6Load(cfg, s)
	dir := filepath.Join(cfg.repo, "loadtest", "results")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return k6step{}, err
	}
	out := filepath.Join(dir, fmt.Sprintf("p6-%s-%s-%d.json", s.name, tag, rate))
	env := map[string]string{
		"BASE_URL": s.base, "KEY": readSizes[0].key(), "SIZE": fmt.Sprint(readSizes[0].n),
		"RATE": fmt.Sprint(rate), "DURATION": fmt.Sprintf("%ds", seconds),
		"VUS": fmt.Sprint(max(20, rate/50)), "MAX_VUS": fmt.Sprint(max(100, rate/5)),
		"P99_MS": fmt.Sprint(p6P99),
	}
	cpu0, cerr := sysinfo.ProcCPU(s.pid())
	sum, _, passed, err := k6.Run(ctx, cfg.k6, load.script, out, env, time.Duration(seconds+30)*time.Second)
	cpu1, cerr1 := sysinfo.ProcCPU(s.pid())
	if err != nil {
		return k6step{}, err
	}
	st := k6step{
		target:   rate,
		achieved: sum.Value("http_reqs", "rate"),
		p99:      sum.Value("http_req_duration{scenario:"+load.scenario+"}", "p(99)"),
		failed:   sum.Value("http_req_failed", "rate"),
		dropped:  sum.Value("dropped_iterations", "count"),
		count:    sum.Value("http_reqs", "count"),
		ok:       passed,
	}
	if cerr == nil && cerr1 == nil && st.count > 0 {
		st.cpu = float64(cpu1-cpu0) / float64(time.Microsecond) / st.count
	}
	if st.count > 0 {
		st.k6cpu = float64(sum.CPU) / float64(time.Microsecond) / st.count
	}
	asked := float64(rate * seconds)
	switch {
	case !passed:
		st.why = fmt.Sprint(sum.FailedThresholds())
	case st.dropped > 0.01*asked:
		st.ok, st.why = false, fmt.Sprintf("%.0f dropped iterations (k6 could not keep up)", st.dropped)
	case st.achieved < 0.95*float64(rate):
		st.ok, st.why = false, fmt.Sprintf("achieved %.0f/s", st.achieved)
	}
	logf("  P6 %s @%d/s %s: %.0f req/s, p99 %.2f ms, failed %.4f, server CPU %.0f µs/req, k6 CPU %.0f µs/req, ok %v %s", s.name, rate, tag, st.achieved, st.p99, st.failed, st.cpu, st.k6cpu, st.ok, st.why)
	return st, nil
}

// p6FixedRate is P6's counted measurement: each system at the same fixed
// rate, runs alternating between the systems.
type p6FixedRate struct {
	rate, seconds int
	systems       []string
	runs          map[string][]k6step
	errs          []string
}

const (
	p6Rate         = 1800 // req/s, inside issue 15's 1,500–2,000
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
	res := &p6FixedRate{rate: p6Rate, seconds: p6FixedSeconds, runs: map[string][]k6step{}}
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
			st, err := k6Trial(ctx, cfg, s, res.rate, res.seconds, fmt.Sprintf("fixed%d", r+1))
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
		st, err := k6Trial(ctx, cfg, targets[i], rate, p6Duration, "ladder")
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
