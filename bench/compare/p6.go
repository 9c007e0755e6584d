package main

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/k6"
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
	p6P99       = 10.0 // ms, DESIGN.md P6
	p6Duration  = 5    // seconds per run
	p6Trials    = 3    // runs per step; the majority decides
	p6MinTarget = 200
	p6MaxTarget = 12800
	p6Bisect    = 3 // bisection steps after the doubling ladder
)

// p6 climbs a doubling ladder of arrival rates (then bisects the bracket)
// for mcpblob and go-sdk in alternation; a step passes when k6's thresholds
// (p99 < 10 ms, 0 failed requests, all checks) hold and k6 kept up (≤ 1 %
// dropped iterations, ≥ 95 % of the asked rate achieved).
func p6(ctx context.Context, cfg *config, systems []*system, rep *report, start time.Time) {
	script := filepath.Join(cfg.repo, "loadtest", "mixed.js")
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
	trial := func(i, rate, n int) (k6step, bool) {
		s := targets[i]
		out := filepath.Join(cfg.repo, "loadtest", "results", fmt.Sprintf("p6-%s-%d-%d.json", s.name, rate, n))
		env := map[string]string{
			"BASE_URL": s.base, "KEY": readSizes[0].key(), "SIZE": fmt.Sprint(readSizes[0].n),
			"RATE": fmt.Sprint(rate), "DURATION": fmt.Sprintf("%ds", p6Duration),
			"VUS": fmt.Sprint(max(20, rate/50)), "MAX_VUS": fmt.Sprint(max(100, rate/5)),
			"P99_MS": fmt.Sprint(p6P99),
		}
		cpu0, cerr := sysinfo.ProcCPU(s.pid())
		sum, _, passed, err := k6.Run(ctx, cfg.k6, script, out, env, time.Duration(p6Duration+30)*time.Second)
		cpu1, cerr1 := sysinfo.ProcCPU(s.pid())
		if err != nil {
			res[i].err = err.Error()
			logf("  P6 %s @%d/s: %v", s.name, rate, err)
			return k6step{}, false
		}
		st := k6step{
			target:   rate,
			achieved: sum.Value("http_reqs", "rate"),
			p99:      sum.Value("http_req_duration{scenario:mixed}", "p(99)"),
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
		asked := float64(rate * p6Duration)
		switch {
		case !passed:
			st.why = fmt.Sprint(sum.FailedThresholds())
		case st.dropped > 0.01*asked:
			st.ok, st.why = false, fmt.Sprintf("%.0f dropped iterations (k6 could not keep up)", st.dropped)
		case st.achieved < 0.95*float64(rate):
			st.ok, st.why = false, fmt.Sprintf("achieved %.0f/s", st.achieved)
		}
		logf("  P6 %s @%d/s trial %d: %.0f req/s, p99 %.2f ms, failed %.4f, server CPU %.0f µs/req, k6 CPU %.0f µs/req, ok %v %s", s.name, rate, n+1, st.achieved, st.p99, st.failed, st.cpu, st.k6cpu, st.ok, st.why)
		return st, true
	}
	// step decides one rate by majority of up to p6Trials runs (a lone GC
	// pause or k6 hiccup on 2 shared cores does not decide a step); it
	// reports the median trial.
	step := func(i, rate int) {
		var trials []k6step
		pass := 0
		for n := range p6Trials {
			st, ok := trial(i, rate, n)
			if !ok {
				return
			}
			trials = append(trials, st)
			if st.ok {
				pass++
			}
			if pass*2 > p6Trials || (len(trials)-pass)*2 > p6Trials {
				break
			}
		}
		slices.SortFunc(trials, func(a, b k6step) int { return cmp.Compare(a.p99, b.p99) })
		st := trials[len(trials)/2]
		st.ok = pass*2 > p6Trials
		st.trials, st.passes = len(trials), pass
		if !st.ok && st.why == "" {
			for _, t := range trials {
				if !t.ok {
					st.why = t.why
				}
			}
		}
		res[i].steps = append(res[i].steps, st)
		if st.ok && (res[i].best == nil || st.target > res[i].best.target) {
			cp := st
			res[i].best = &cp
		}
	}
	logf("P6 k6 mixed small requests (mcpblob vs go-sdk)")
	// lo: highest passing rate so far; hi: lowest failing rate (0: none yet).
	lo, hi := make([]int, len(targets)), make([]int, len(targets))
	over := func(i int) bool {
		return res[i].err != "" || ctx.Err() != nil || time.Since(start) > cfg.budget
	}
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
	// Bisection between the last passing and the first failing rate, the
	// systems still taking turns, until the bracket is within 12.5 %.
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
	rep.p6 = res
}
