package main

import (
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/bench/internal/codecbench"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

// Each builder turns one workload's measurements into a pair.Target for
// the generic renderer, with its miss lines computed from the figures.

// allTargets are P1–P7 followed by any targets other workloads added.
func (r *report) allTargets() []*pair.Target {
	ts := []*pair.Target{r.p1Target(), r.p2Target(), r.p3Target()}
	for _, l := range r.later {
		ts = append(ts, r.laterTarget(l))
	}
	ts = append(ts, r.p6Target(), p7Target())
	ts = append(ts, r.targets...)
	sortTargets(ts)
	return ts
}

// pairOf is mcpblob against ref in table t, run by run (run i of both
// sides belongs to the same repetition).
func pairOf(t *table, ref string, want float64) pair.Runs {
	p := pair.Runs{Label: "mcpblob ÷ " + ref, Unit: "MB/s", RefName: ref, Want: want}
	m, o := t.get("mcpblob"), t.get(ref)
	if m == nil || o == nil {
		return p
	}
	n := min(len(m.perRun), len(o.perRun))
	p.Ours, p.Ref = m.perRun[:n], o.perRun[:n]
	return p
}

// growthBound is mcpblob's RSS growth in table t against limit MiB.
func growthBound(t *table, limit float64) pair.Bound {
	b := pair.Bound{Label: "RSS growth", Limit: limit, Unit: "MiB"}
	if m := t.get("mcpblob"); m != nil {
		b.Value = float64(m.growth) / (1 << 20)
	}
	return b
}

// cellErrors are a table cell's failures, named by system.
func cellErrors(t *table, name string) []string {
	var out []string
	if c := t.get(name); c != nil {
		for _, e := range c.errs {
			out = append(out, name+": "+e)
		}
	}
	return out
}

func (r *report) p1Target() *pair.Target {
	t := &pair.Target{ID: "P1", Title: "base64 encode/decode 64 KiB / 1 MiB / 64 MiB", Goal: "≥ 1.5× emmansun in cache (64 KiB, 1 MiB), ≥ 1.0× at 64 MiB, ≥ 10× encoding/base64"}
	if r.codec == nil {
		t.NotRun = "-skip-codec"
		return t
	}
	for si, size := range codecbench.Sizes() {
		for op, opName := range []string{"encode", "decode"} {
			mb := r.codec.MBps[si][op] // ours, emmansun, stdlib, copy
			q := r.codec.Ratios()[2*si+op]
			name := size + " " + opName
			t.Pairs = append(t.Pairs,
				pair.Runs{Label: name + " ÷ emmansun", Unit: "MB/s", Ours: mb[:1], Ref: mb[1:2], RefName: "emmansun " + name, Want: q.Target},
				pair.Runs{Label: name + " ÷ encoding/base64", Unit: "MB/s", Ours: mb[:1], Ref: mb[2:3], RefName: "stdlib " + name, Want: codecbench.StdlibTarget})
			if q.VsEmmansun < q.Target || q.VsStdlib < codecbench.StdlibTarget {
				t.Why = append(t.Why, p1Why(name, mb))
			}
		}
	}
	t.Detail = "Each figure is the median of the codec's interleaved runs (one pair per size and direction): see the codec table below."
	return t
}

// p1Why explains a codec miss from its figures (ours, emmansun, stdlib,
// copy() in MB/s): near copy() the codec is memory-bound; far below it the
// kernel is slow or the run was disturbed.
func p1Why(name string, mb []float64) string {
	head := fmt.Sprintf("P1 %s: ours %s MB/s, emmansun %s, encoding/base64 %s, copy() %s (ours/copy %.2f×)", name, human(mb[0]), human(mb[1]), human(mb[2]), human(mb[3]), mb[0]/mb[3])
	if mb[0] >= 0.7*mb[3] {
		return head + ": the codec runs near a plain memory copy, so it is memory-bound here; what would close it is fewer passes over memory (non-temporal stores, or fusing the JSON scan into the decode), not faster arithmetic."
	}
	return head + ": the codec runs well below a plain memory copy, so memory does not bound it here: either the kernel tier in the codec table is slower than it should be at this size, or the run was disturbed (other processes on the 2 cores; compare `make bench-codec` alone)."
}

func (r *report) p2Target() *pair.Target {
	t := &pair.Target{ID: "P2", Title: "resources/read 256 MiB, loopback", Goal: "≥ 0.7× nginx sendfile (≥ 30× go-sdk, ≥ 10× mcp-go); RSS growth ≤ 32 MiB; first byte < 50 ms"}
	var big *table
	for _, tb := range r.p2 {
		if tb.size == 256<<20 {
			big = tb
		}
	}
	m := big.get("mcpblob")
	if m == nil || m.runs == 0 {
		t.NotRun = "256 MiB not measured (time budget)"
		return t
	}
	t.Pairs = []pair.Runs{pairOf(big, "nginx", 0.7), pairOf(big, "go-sdk", 30), pairOf(big, "mcp-go", 10)}
	t.Bounds = []pair.Bound{growthBound(big, 32), {Label: "first byte", Value: float64(m.ttfb) / 1e6, Limit: 50, Unit: "ms"}}
	t.Errors = cellErrors(big, "mcpblob")
	for _, p := range t.Pairs {
		if !p.Met() {
			t.Why = append(t.Why, "P2: "+pairGap(p, fmt.Sprintf("≥ %g×", p.Want))+" "+r.p2Closing(big, p))
		}
	}
	if !t.Bounds[0].Met() {
		t.Why = append(t.Why, fmt.Sprintf("P2: RSS grew by %.0f MiB > 32 MiB during a 256 MiB read: something buffers the message; the streaming path should hold only a few chunk buffers.", t.Bounds[0].Value))
	}
	if !t.Bounds[1].Met() {
		t.Why = append(t.Why, fmt.Sprintf("P2: first byte after %.1f ms ≥ 50 ms: the envelope should leave before the first chunk is encoded.", t.Bounds[1].Value))
	}
	return t
}

// p2Closing explains a P2 miss against the loopback ceiling: base64 puts
// 4/3 of the bytes on the wire, so raw TCP × 3/4 bounds any base64 server.
func (r *report) p2Closing(t *table, p pair.Runs) string {
	if r.nginxErr != "" && p.RefName == "nginx" {
		return "nginx was not available (" + r.nginxErr + "): run `make tools-apt`."
	}
	m, ref, tcp := t.get("mcpblob"), t.get(p.RefName), t.get("raw TCP")
	if m == nil || ref == nil || ref.mbps == 0 {
		return ""
	}
	need := p.Want * ref.mbps
	msg := fmt.Sprintf("mcpblob put %.0f MB/s of base64 on the wire", m.mbps*4/3)
	if tcp != nil && tcp.mbps > 0 {
		msg += fmt.Sprintf(", %.0f %% of this machine's raw loopback TCP ceiling of %.0f MB/s", 100*m.mbps*4/3/tcp.mbps, tcp.mbps)
		if need*4/3 > tcp.mbps {
			return msg + fmt.Sprintf("; %.0f MB/s of raw bytes is %.0f MB/s of base64, above that ceiling: no base64 transport can meet this ratio here (the base64 ceiling is %.2f× %s); only raw bytes (resources/stream, P3) can.", need, need*4/3, tcp.mbps*3/4/ref.mbps, p.RefName)
		}
	}
	return msg + ". What would close it: overlap the base64 encode with the socket writes (encode the next chunk on the other core while write(2) drains the current one), write in large vectors, size the socket buffers."
}

// laterTarget is P4 or P5 from its table.
func (r *report) laterTarget(l *laterResult) *pair.Target {
	t := &pair.Target{ID: l.id, Title: l.title, Goal: l.target}
	switch {
	case l.unavailable != "":
		t.NotRun = l.unavailable
		return t
	case l.table == nil:
		t.NotRun = "time budget"
		return t
	}
	switch l.id {
	case "P4":
		t.Pairs = []pair.Runs{pairOf(l.table, "go-sdk", 30), pairOf(l.table, "mcp-go", 30)}
	case "P5":
		t.Pairs = []pair.Runs{pairOf(l.table, "raw disk write", 0.8)}
	}
	t.Bounds = []pair.Bound{growthBound(l.table, 32)}
	t.Errors = cellErrors(l.table, "mcpblob")
	for _, p := range t.Pairs {
		if !p.Met() {
			t.Why = append(t.Why, l.id+": "+pairGap(p, fmt.Sprintf("≥ %g×", p.Want))+" "+r.laterClosing(l.id, p))
		}
	}
	if !t.Bounds[0].Met() {
		t.Why = append(t.Why, fmt.Sprintf("%s: RSS grew by %.0f MiB > 32 MiB: the path buffers instead of streaming.", l.id, t.Bounds[0].Value))
	}
	return t
}

func (r *report) laterClosing(id string, p pair.Runs) string {
	switch id {
	case "P4":
		_, need, _, _ := pair.Stats(positive(p.Ref))
		need *= p.Want
		msg := ""
		if disk := r.diskMBps(); disk > 0 && need > disk {
			msg = fmt.Sprintf("That is above this machine's raw disk write with fsync (%.0f MB/s, P5 baseline): the peers only decode into memory while mcpblob stores every upload, so the ratio is bounded by storage here. ", disk)
		} else if disk > 0 {
			msg = fmt.Sprintf("The disk allows %.0f MB/s (P5 baseline), so the limit is in the pipeline. ", disk)
		}
		return msg + "What would close it: overlap the decode with the disk writes (double buffering), hash in the same pass as the decode, larger write chunks."
	case "P5":
		return "Both sides write the same generated bytes; the upload adds loopback HTTP, multipart parsing, sha256 and the commit on 2 shared cores. What would close it: a CPU profile of the /u/ path, then overlap hashing and writing and use larger write chunks."
	}
	return ""
}

// p6Target is P6 at the fixed rate: CPU per request against nginx and
// go-sdk, p99 and failures.
func (r *report) p6Target() *pair.Target {
	t := &pair.Target{ID: "P6", Title: "mixed small requests (4 KiB reads, tools/list; vegeta)", Goal: fmt.Sprintf("at %d req/s: server CPU per request ≤ 2× nginx's (same 4 KiB file), ≥ 4× less than go-sdk; p99 < %.0f ms; 0 errors", p6Rate, p6P99)}
	f := r.p6fixed
	switch {
	case r.p6Err != "":
		t.NotRun = r.p6Err
		return t
	case f == nil:
		t.NotRun = "-skip-p6"
		return t
	}
	ours := f.cpuRuns("mcpblob")
	t.Pairs = []pair.Runs{
		{Label: "CPU/request, nginx ÷ mcpblob", Unit: "µs/request", Ours: ours, Ref: f.cpuRuns("nginx"), RefName: "nginx", Want: 0.5, Lower: true},
		{Label: "CPU/request, go-sdk ÷ mcpblob", Unit: "µs/request", Ours: ours, Ref: f.cpuRuns("go-sdk"), RefName: "go-sdk", Want: 4, Lower: true},
	}
	var p99s []float64
	failed := 0.0
	for _, st := range f.runs["mcpblob"] {
		p99s = append(p99s, st.p99)
		failed += st.failed * st.count
	}
	t.Bounds = []pair.Bound{{Label: fmt.Sprintf("p99 at %d/s (median run)", f.rate), Value: median(p99s), Limit: p6P99, Unit: "ms"}, {Label: "failed requests", Value: failed, Limit: 0, Unit: "requests"}}
	t.Errors = append(t.Errors, f.errs...)
	for _, name := range f.systems {
		if name == p6Floor {
			continue // information: its runs set no verdict
		}
		for _, st := range f.runs[name] {
			if st.achieved < 0.95*float64(f.rate) || st.dropped > 0.01*float64(f.rate*f.seconds) {
				t.Errors = append(t.Errors, fmt.Sprintf("%s: vegeta sent %.0f/s of %d/s (%.0f not sent): not at the fixed rate", name, st.achieved, f.rate, st.dropped))
			}
		}
	}
	for _, p := range t.Pairs {
		if !p.Met() {
			t.Why = append(t.Why, "P6: "+pairGap(p, fmt.Sprintf("≥ %g×", p.Want))+" "+r.p6Closing(p))
		}
	}
	if !t.Bounds[0].Met() {
		t.Why = append(t.Why, fmt.Sprintf("P6: p99 %.1f ms ≥ %.0f ms at %d/s: %s", t.Bounds[0].Value, p6P99, f.rate, r.p6LatencyHint()))
	}
	return t
}

// p6Closing says how far mcpblob's CPU per request is from the target and
// what it is spent beside.
func (r *report) p6Closing(p pair.Runs) string {
	_, ours, _, ok := pair.Stats(positive(p.Ours))
	_, ref, _, _ := pair.Stats(positive(p.Ref))
	if !ok || ref == 0 {
		return ""
	}
	allowed := ref / p.Want
	msg := fmt.Sprintf("mcpblob has to shed %.0f µs of its %.0f µs per request (%.0f %%).", ours-allowed, ours, 100*(ours-allowed)/ours)
	if gen := r.p6fixed.medianGenCPU("mcpblob"); gen > 0 {
		msg += fmt.Sprintf(" The load generator (vegeta) itself spent %.0f µs per request on the same cores, so at this rate the machine is %.0f %% busy with the load generator alone.", gen, 100*gen*float64(r.p6fixed.rate)/1e6/float64(max(1, r.cores)))
	}
	msg += r.p6FloorLine(ours, allowed)
	if p.RefName == "nginx" {
		msg += " nginx serves the file with one open, fstat and sendfile and a fixed header."
	}
	return msg
}

// p6FloorLine sets mcpblob's CPU per request (ours) and the target's
// allowance beside the fasthttp floor: what the fixed front end costs
// before any MCP work, and so what is left for it.
func (r *report) p6FloorLine(ours, allowed float64) string {
	floor := median(r.p6fixed.cpuRuns(p6Floor))
	if floor <= 0 {
		return " (the fasthttp floor was not measured: " + r.p6FloorErr + ")"
	}
	msg := fmt.Sprintf(" The front end alone (%s: fasthttp reading the same file per request, no MCP) costs %.0f µs; mcpblob's MCP work on top of it (session, JSON-RPC, base64, envelope, log line, metrics; half the load is tools/list) is %.0f µs.", p6Floor, floor, ours-floor)
	if floor >= allowed {
		return msg + fmt.Sprintf(" The floor is already above the %.0f µs the target allows, so no server on the fixed front end (fasthttp on the Go runtime: netpoller hand-offs, sysmon, a read and a write per request) can meet it; what would close it is a different front end (docs/design.md says why it is fasthttp), or accepting the floor.", allowed)
	}
	return msg + fmt.Sprintf(" The target leaves %.0f µs for it: what would close it is cutting the MCP work by %.0f µs (profile with bench/profiles/p6-measure.sh: per-request allocations, the log line, the session check).", allowed-floor, ours-allowed)
}

// p6LatencyHint names what a p99 above the bound points at.
func (r *report) p6LatencyHint() string {
	return "a p99 far above the median at a moderate rate points at pauses (GC, disk writeback, the load generator's own scheduling on the shared cores) rather than throughput; the per-run figures are in the P6 section."
}

// medianGenCPU is the load generator's own median CPU per request against name.
func (f *p6FixedRate) medianGenCPU(name string) float64 {
	var v []float64
	for _, st := range f.runs[name] {
		v = append(v, st.gencpu)
	}
	return median(v)
}

func p7Target() *pair.Target {
	return &pair.Target{ID: "P7", Title: "3 nodes + nginx + SeaweedFS, loopback", Goal: "0 errors; links and sessions across nodes; no loss on node kill",
		NotRun: "not measured here: a pass/fail cluster check, not a ratio (`make cluster`, bench/cluster; docs/deploy.md)"}
}

// renderDetailP6 is P6's section: the fixed-rate runs and, when it ran, the
// req/s ladder.
func (r *report) renderDetailP6(b *strings.Builder) {
	f := r.p6fixed
	if f != nil {
		fmt.Fprintf(b, "Fixed rate: %d req/s for %d s per run, the systems taking turns (mcpblob and go-sdk: the mixed scenario of bench/internal/load, resources/read and tools/list in turn on one session; nginx: its static-get scenario, GETs of the same 4 KiB file; the fasthttp floor, bench/peers/fasthttpfile, the same GETs served by fasthttp alone as mcpblob configures it, reading the file per request: what the fixed front end costs before any MCP work, information beside the verdict). Server CPU per request: the serving process's user + system time over the run (/proc/PID/stat, 10 ms ticks) ÷ the requests vegeta made; vegeta's own CPU per request (this process, in which it runs as a library) beside it.\n\n", f.rate, f.seconds)
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
			fmt.Fprintf(b, "| %s | %d | %.0f | %s | %s | %.0f µs | %.0f µs | %.0f |\n", name, len(f.runs[name]), median(achV), strings.Join(p99, ", "), strings.Join(cpu, ", "), median(f.cpuRuns(name)), f.medianGenCPU(name), fails)
		}
		b.WriteString("\n![P6 CPU per request](charts/p6-cpu-per-request.svg)\n")
	}
	if len(r.p6) == 0 {
		b.WriteString("\nThe req/s ladder (information) did not run: -quick or not enough time left in the budget.\n")
		return
	}
	fmt.Fprintf(b, "\nInformation: the highest rate with p99 < %.0f ms, 0 errors and vegeta keeping up, one %d s run per step, rates doubling from %d/s then %d bisection steps. vegeta shares the 2 CPUs with the server, so these rates include the load generator's cost.\n\n", p6P99, p6Duration, p6MinTarget, p6Bisect)
	b.WriteString("| system | highest passing rate (req/s) | p99 there | server CPU per request there | vegeta CPU per request there | steps (rate: p99 ms, verdict) |\n|---|--:|--:|--:|--:|---|\n")
	for _, p := range r.p6 {
		best, p99, cpu, gencpu := "none", "—", "—", "—"
		if p.best != nil {
			best = fmt.Sprint(p.best.target)
			p99 = fmt.Sprintf("%.2f ms", p.best.p99)
			cpu = fmt.Sprintf("%.0f µs", p.best.cpu)
			gencpu = fmt.Sprintf("%.0f µs", p.best.gencpu)
		}
		var steps []string
		for _, s := range p.steps {
			st := "ok"
			if !s.ok {
				st = "fail: " + s.why
			}
			steps = append(steps, fmt.Sprintf("%d: %.2f, %s", s.target, s.p99, strings.ReplaceAll(st, "|", "/")))
		}
		if p.err != "" {
			steps = append(steps, "error: "+trunc(p.err, 120))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", p.system, best, p99, cpu, gencpu, strings.Join(steps, "; "))
	}
	b.WriteString("\n![P6 ladder](charts/p6-mixed.svg)\n")
}
