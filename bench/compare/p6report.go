package main

import (
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"strings"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

const p6P99 = 10.0 // ms at 16 connections (P6, docs/design.md)

// p6Pairs are the saturation ratios the target asks for (P6, docs/design.md): each
// mcpblob row's req/s over a reference's, round by round.
var p6Pairs = []struct {
	label, ours, ref string
	want             float64
}{
	{"resources/read ÷ fasthttp floor", p6RowRead, p6RowFloor, 0.8},
	{"resources/read ÷ nginx", p6RowRead, p6RowNginx, 0.5},
	{"tools/list ÷ fasthttp floor", p6RowList, p6RowFloor, 0.9},
	{"resources/read ÷ go-sdk", p6RowRead, p6RowGoSDK, 5},
	{"read with an API key ÷ fasthttp floor", p6RowKey, p6RowFloor, 0.8},
	{"read with an OAuth token ÷ fasthttp floor", p6RowOAuth, p6RowFloor, 0.8},
	{"read in 2026-07-28 ÷ fasthttp floor", p6RowModern, p6RowFloor, 0.8},
}

// p6RefName is how a reference row is named in a pair.
func p6RefName(row string) string {
	switch row {
	case p6RowFloor:
		return p6Floor
	case p6RowNginx:
		return "nginx"
	case p6RowGoSDK:
		return "go-sdk"
	}
	return row
}

// p6Target is P6 at saturation; the fixed-rate CPU per request is
// information in its section.
func (r *report) p6Target() *pair.Target {
	t := &pair.Target{ID: "P6", Title: "small requests at saturation (4 KiB resources/read, tools/list; wrk)",
		Goal: fmt.Sprintf("each server on one CPU, wrk -t1 -c%d on the other: resources/read ≥ 0.8× the fasthttp floor, ≥ 0.5× nginx, ≥ 5× go-sdk; tools/list ≥ 0.9× the floor; the read with an API key, with an OAuth token and in 2026-07-28 ≥ 0.8× the floor; p99 < %.0f ms; every answer 200", p6Conns, p6P99)}
	s := r.p6sat
	switch {
	case r.p6Err != "":
		t.NotRun = r.p6Err
		return t
	case s == nil:
		t.NotRun = "-skip-p6"
		return t
	}
	for _, p := range p6Pairs {
		t.Pairs = append(t.Pairs, pair.Runs{Label: p.label, Unit: "req/s", Ours: s.rps(p.ours), Ref: s.rps(p.ref), RefName: p6RefName(p.ref), Want: p.want})
	}
	worst, p99 := s.worstP99()
	t.Bounds = []pair.Bound{
		{Label: "p99 (worst mcpblob row, median round: " + worst + ")", Value: p99, Limit: p6P99, Unit: "ms"},
		{Label: "answers not 200, JSON-RPC errors, socket errors (all rows)", Value: float64(s.bad()), Limit: 0, Unit: "answers"},
	}
	t.Errors = s.errors()
	for i, p := range t.Pairs {
		if !p.Met() {
			t.Why = append(t.Why, "P6: "+render.PairGap(p, fmt.Sprintf("≥ %g×", p.Want))+" "+s.closing(p, p6Pairs[i].ours, p6Pairs[i].ref))
		}
	}
	if !t.Bounds[0].Met() {
		t.Why = append(t.Why, s.p99Why(worst, p99))
	}
	if len(t.Why) > 0 { // the generic lines stand only when none is written here
		for _, e := range t.Errors {
			t.Why = append(t.Why, "P6: "+render.Trunc(e, 200))
		}
	}
	return t
}

// worstP99 is the mcpblob row with the highest median p99, and that p99;
// the row with tracing on is information (its cost), not held to the
// bound.
func (s *p6Saturation) worstP99() (string, float64) {
	name, worst := "none measured", -1.0
	for _, r := range s.rows {
		if !strings.HasPrefix(r.name, "mcpblob") || r.name == p6RowTraced {
			continue
		}
		if p := s.stat(r.name, func(w wrkRun) float64 { return w.p99 }); p > worst {
			name, worst = r.name, p
		}
	}
	return name, max(worst, 0)
}

// bad counts the answers that were not 200 with a result, and socket errors.
func (s *p6Saturation) bad() int64 {
	var n int64
	for _, r := range s.rows {
		for _, w := range r.runs {
			n += w.non200 + w.rpcErrors + w.sockErrors
		}
	}
	return n
}

// errors are the rows that did not start, wrk failures and invalid rounds.
func (s *p6Saturation) errors() []string {
	out := append([]string(nil), s.skipped...)
	for _, r := range s.rows {
		for _, e := range r.errs {
			out = append(out, r.name+": "+e)
		}
		for i, w := range r.runs {
			if w.requests > 0 && !w.valid() {
				e := fmt.Sprintf("%s round %d: %d answers not 200, %d without a JSON-RPC result, %d socket errors (%s; a timeout is an answer slower than %s): not a valid run, left out of the medians",
					r.name, i+1, w.non200, w.rpcErrors, w.sockErrors, w.sockDetail, p6Timeout)
				if w.firstBad != "" {
					e += "; the first: " + w.firstBad
				}
				out = append(out, e)
			}
		}
	}
	return out
}

// closing explains a missed ratio from the figures: what one request costs
// each side on its core, what the target leaves mcpblob, and what stands
// between.
func (s *p6Saturation) closing(p pair.Runs, ours, ref string) string {
	o, f := s.stat(ours, wrkRPS), s.stat(ref, wrkRPS)
	if o == 0 || f == 0 {
		return ""
	}
	oUS, fUS, allowed := 1e6/o, 1e6/f, 1e6/(p.Want*f)
	msg := fmt.Sprintf("On its one core mcpblob spends %.1f µs per request (1 s ÷ %s req/s), %s %.1f µs; %g× leaves mcpblob %.1f µs, so %.1f µs (%.0f %%) has to go.",
		oUS, render.Human(o), p.RefName, fUS, p.Want, allowed, oUS-allowed, 100*(oUS-allowed)/oUS)
	msg += s.busyNote(ours, ref)
	switch ref {
	case p6RowFloor:
		msg += fmt.Sprintf(" The floor is fasthttp alone reading the same file per request, so mcpblob's work on top of the same front end is %.1f µs (session or key check, JSON-RPC, base64 of 4 KiB into the envelope, the log line, metrics), and the target leaves %.1f µs for it: profile the saturated path (make bench-smallreq, pprof and perf) and cut the largest items.",
			oUS-fUS, allowed-fUS)
	case p6RowNginx:
		msg += s.nginxNote(allowed)
	case p6RowGoSDK:
		msg += " go-sdk is the reference here, not the bound: the floor ratios say how far mcpblob's own cost is from its front end's."
	}
	return msg
}

func wrkRPS(w wrkRun) float64 { return w.rps }

// busyNote says, from the server CPU's counters, when a round was not one
// saturated core: the CPU idle (the server waited), or other processes on
// it; and when wrk used all of its own CPU.
func (s *p6Saturation) busyNote(ours, ref string) string {
	var msg string
	for _, name := range []string{ours, ref} {
		busy := s.stat(name, func(w wrkRun) float64 { return w.coreBusy })
		own := s.stat(name, func(w wrkRun) float64 { return w.serverCores })
		irq := s.stat(name, func(w wrkRun) float64 { return w.coreIRQ })
		switch {
		case busy > 0 && busy < 0.9:
			msg += fmt.Sprintf(" CPU %s was idle %.0f %% of the time under %s: the server waited rather than computed, so its req/s is below one core's.", p6ServerCPU, 100*(1-busy), name)
		case busy-own-irq > 0.1:
			msg += fmt.Sprintf(" Other processes took %.0f %% of CPU %s under %s (the server %.0f %%, interrupts %.0f %%): rerun on a quiet machine.", 100*(busy-own-irq), p6ServerCPU, name, 100*own, 100*irq)
		}
		if c := s.stat(name, func(w wrkRun) float64 { return w.wrkCores }); c > 0.9 {
			msg += fmt.Sprintf(" wrk used %.0f %% of its CPU against %s: the load generator bounds that figure, not the server.", 100*c, name)
		}
	}
	if strings.Contains(msg, "Other processes") {
		msg += fmt.Sprintf(" mcpblob's own CPU time was %.1f µs per request.", s.stat(ours, func(w wrkRun) float64 { return w.serverUS }))
	}
	if s.steal > 5 {
		msg += fmt.Sprintf(" The hypervisor stole %.1f %% of CPU time during the rounds.", s.steal)
	}
	return msg
}

// nginxNote sets the µs per request 0.5× nginx allows beside the floor.
func (s *p6Saturation) nginxNote(allowedUS float64) string {
	msg := " nginx answers with open, fstat, sendfile and a fixed header, in C."
	floor := s.stat(p6RowFloor, wrkRPS)
	if floor == 0 {
		return msg
	}
	fUS := 1e6 / floor
	if allowedUS <= fUS {
		return msg + fmt.Sprintf(" The %.0f µs it allows is below the fasthttp floor's own %.0f µs: no server on mcpblob's front end (fasthttp on the Go runtime) can meet it; what would close it is a cheaper front end, or a target against the floor alone.", allowedUS, fUS)
	}
	return msg + fmt.Sprintf(" The %.0f µs it allows is %.0f µs above the fasthttp floor's %.0f µs: that is what mcpblob's MCP work may cost.", allowedUS, allowedUS-fUS, fUS)
}

// p99Why explains a p99 over the bound from the row's own figures.
func (s *p6Saturation) p99Why(row string, p99 float64) string {
	rps, p50 := s.stat(row, wrkRPS), s.stat(row, func(w wrkRun) float64 { return w.p50 })
	mean := 0.0
	if rps > 0 {
		mean = 1e3 * p6Conns / rps // Little's law, ms
	}
	return fmt.Sprintf("P6: p99 %.1f ms ≥ %.0f ms on %s at %d connections: its median latency was %.2f ms, and %d requests in flight on one core at %s req/s make %.2f ms on average (Little's law), so the tail is pauses rather than throughput: GC (the heap target on GOMAXPROCS=1), the batched log writer, or another process on CPU %s; GODEBUG=gctrace=1 on the pinned server shows which.",
		p99, p6P99, row, p6Conns, p50, p6Conns, render.Human(rps), mean, p6ServerCPU)
}

// renderDetailP6 is P6's section: the saturation table, then the fixed-rate
// CPU per request as information.
func (r *report) renderDetailP6(b *strings.Builder) {
	if s := r.p6sat; s != nil {
		fmt.Fprintf(b, "At saturation: every server pinned to CPU %s (`taskset`; the Go servers with GOMAXPROCS=1, nginx with one worker), `wrk -t1 -c%d` (Debian's) pinned to CPU %s, %d rounds of %d s with the rows taking turns (each round starting one row further along), after a %d s warm-up per row. wrk's Lua script (bench/compare/wrk/p6.lua) sends the MCP POST with the session the harness opened, the protocol-version header and a fresh JSON-RPC id per request, and counts every answer that is not 200 or carries no JSON-RPC result; a round with any such answer, or a socket error, is not valid and is left out. Figures are the median round (min–max). *Per request* is 1 s ÷ req/s: the server's core time per request when it is saturated. *CPU %s busy* shows whether it was (/proc/stat, median round): the share of the run the CPU worked, then the server's own user + system time (/proc/PID/stat) and the interrupt time (irq + softirq: the kernel's loopback TCP receive work, which this kernel charges to no process); the rest is other processes. wrk's own CPU time is beside it (near 1 core the load generator bounds the figure).\n\n",
			p6ServerCPU, p6Conns, p6LoadCPU, s.rounds, s.seconds, p6WarmSeconds, p6ServerCPU)
		s.renderTable(b)
		fmt.Fprintf(b, "\nCPU steal during the rounds: %.1f %%.\n", s.steal)
		if line := s.tracingCost(); line != "" {
			b.WriteString("\n" + line + "\n")
		}
		for _, k := range s.skipped {
			fmt.Fprintf(b, "\nNot measured: %s\n", k)
		}
		b.WriteString("\n![P6 at saturation](charts/p6-saturation.svg)\n")
	}
	r.renderFixedP6(b)
}

// renderTable is the saturation table, a row per server and request.
func (s *p6Saturation) renderTable(b *strings.Builder) {
	fmt.Fprintf(b, "| server | request | req/s (median, min–max) | per request | p99 (median, min–max) | CPU %s busy: server, interrupts | wrk CPU | valid rounds | answers not 200 / no result / socket errors |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n", p6ServerCPU)
	for _, r := range s.rows {
		var rps, p99 []float64
		var bad [3]int64
		for _, w := range r.runs {
			bad[0], bad[1], bad[2] = bad[0]+w.non200, bad[1]+w.rpcErrors, bad[2]+w.sockErrors
			if w.valid() {
				rps, p99 = append(rps, w.rps), append(p99, w.p99)
			}
		}
		per := "—"
		if m := measure.Median(rps); m > 0 {
			per = fmt.Sprintf("%.1f µs", 1e6/m)
		}
		txt := p6RowText[r.name]
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.0f %%: %.0f %%, %.0f %% | %.2f cores | %d of %d | %d / %d / %d |\n",
			txt[0], txt[1], spread(rps, "%.0f"), per, spread(p99, "%.2f ms"),
			100*s.stat(r.name, func(w wrkRun) float64 { return w.coreBusy }),
			100*s.stat(r.name, func(w wrkRun) float64 { return w.serverCores }),
			100*s.stat(r.name, func(w wrkRun) float64 { return w.coreIRQ }),
			s.stat(r.name, func(w wrkRun) float64 { return w.wrkCores }),
			len(rps), len(r.runs), bad[0], bad[1], bad[2])
	}
}

// spread is "median (min–max)" of v in format f, or "—".
func spread(v []float64, f string) string {
	lo, med, hi, ok := pair.Stats(v)
	if !ok {
		return "—"
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", med, lo, hi)
}

// renderFixedP6 is the fixed-rate runs: CPU per request, information.
func (r *report) renderFixedP6(b *strings.Builder) {
	f := r.p6fixed
	if f == nil {
		return
	}
	fmt.Fprintf(b, "\nInformation (no verdict): CPU per request at a fixed %d req/s, %d s per run, the same pinned servers taking turns (mcpblob and go-sdk: the mixed scenario of loadtest/rig/load, resources/read and tools/list in turn on one session; nginx and the fasthttp floor: its static-get scenario, GETs of the same 4 KiB file). vegeta runs in the harness process, unpinned. Server CPU per request: the serving process's user + system time over the run (/proc/PID/stat, 10 ms ticks) ÷ the requests vegeta made; vegeta's own CPU per request beside it.\n\n", f.rate, f.seconds)
	b.WriteString("| system | runs | achieved req/s (median) | p99 per run (ms) | server CPU per request per run (µs) | median | vegeta CPU per request (median) | failed requests |\n|---|--:|--:|---|---|--:|--:|--:|\n")
	for _, name := range f.systems {
		var p99, cpu []string
		var achV []float64
		fails := 0.0
		for _, st := range f.runs[name] {
			achV = append(achV, st.achieved)
			p99 = append(p99, fmt.Sprintf("%.2f", st.p99))
			cpu = append(cpu, fmt.Sprintf("%.0f", st.cpu))
			fails += st.failed * st.count
		}
		fmt.Fprintf(b, "| %s | %d | %.0f | %s | %s | %.0f µs | %.0f µs | %.0f |\n", name, len(f.runs[name]), measure.Median(achV), strings.Join(p99, ", "), strings.Join(cpu, ", "), measure.Median(f.cpuRuns(name)), f.medianGenCPU(name), fails)
	}
	for _, e := range f.errs {
		fmt.Fprintf(b, "\nFixed-rate run failed: %s\n", e)
	}
	b.WriteString("\n![P6 CPU per request](charts/p6-cpu-per-request.svg)\n")
}

// chart is the median req/s of every row.
func (s *p6Saturation) chart() string {
	var bars []render.Bar
	for _, r := range s.rows {
		label := strings.ReplaceAll(r.name, "resources/read", "read") // the chart's label column is narrow
		b := render.Bar{Label: label, Value: s.stat(r.name, wrkRPS), Mark: strings.HasPrefix(r.name, "mcpblob")}
		if b.Value == 0 {
			b.Text = "no valid round"
		}
		bars = append(bars, b)
	}
	return render.BarChart(fmt.Sprintf("P6 at saturation: req/s of one pinned core, wrk -t1 -c%d (median round, higher is better)", p6Conns), "req/s", bars)
}

// tracingCost is what tracing on costs a read at saturation (information,
// no verdict): the traced row's server CPU per request against the plain
// read's, and its req/s; "" when either row was not measured.
func (s *p6Saturation) tracingCost() string {
	cpu := func(w wrkRun) float64 { return w.serverUS }
	on, off := s.stat(p6RowTraced, cpu), s.stat(p6RowRead, cpu)
	rOn, rOff := s.stat(p6RowTraced, wrkRPS), s.stat(p6RowRead, wrkRPS)
	if on == 0 || off == 0 || rOff == 0 {
		return ""
	}
	return fmt.Sprintf("Tracing on (every request sampled, exported over OTLP/HTTP to a receiver in the harness): mcpblob's own CPU per `resources/read` %.1f µs against %.1f µs with tracing off, %+.1f µs (%+.0f %%) per request; %s req/s against %s (median rounds). With tracing off the server takes no span and no allocation for it: the plain rows above are the cost of having it built in.",
		on, off, on-off, 100*(on-off)/off, render.Human(rOn), render.Human(rOff))
}
