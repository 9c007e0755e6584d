package main

import (
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"

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
	render.SortTargets(ts)
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
	t := &pair.Target{ID: "P1", Title: "base64 encode/decode 64 KiB / 1 MiB / 64 MiB", Goal: "≥ 1.5× emmansun in cache (64 KiB, 1 MiB), ≥ 1.0× at 64 MiB, ≥ 10× encoding/base64; every lower kernel tier (AVX2) ≥ 1.0× emmansun at every size"}
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
	for _, p := range p1LowerTiers(r.codec) {
		t.Pairs = append(t.Pairs, p)
		if !p.Met() {
			t.Why = append(t.Why, "P1 "+render.PairGap(p, "≥ 1×")+": the lower tier's kernel, selected in-process in the same runs; on a CPU of that tier it is what the codec runs (compare `GODEBUG=cpu.avx512f=off make bench-codec`).")
		}
	}
	t.Detail = "Each figure is the median of the codec's interleaved runs (one pair per size and direction; a lower kernel tier, selected in-process, beside the default one): see the codec table below."
	return t
}

// p1LowerTiers are the pairs of the codec's lower kernel tiers (AVX2 on
// an AVX-512 VBMI CPU), each held to parity with emmansun at every size
// and direction (issue 29), from the same interleaved runs.
func p1LowerTiers(c *codecbench.Results) []pair.Runs {
	var out []pair.Runs
	for _, l := range c.Lower {
		for si, size := range codecbench.Sizes() {
			for op, opName := range []string{"encode", "decode"} {
				name := l.Tier + " " + size + " " + opName
				out = append(out, pair.Runs{Label: name + " ÷ emmansun", Unit: "MB/s",
					Ours: []float64{l.MBps[si][op]}, Ref: c.MBps[si][op][1:2], RefName: "emmansun " + size + " " + opName, Want: 1.0})
			}
		}
	}
	return out
}

// p1Why explains a codec miss from its figures (ours, emmansun, stdlib,
// copy() in MB/s): near copy() the codec is memory-bound; far below it the
// kernel is slow or the run was disturbed.
func p1Why(name string, mb []float64) string {
	head := fmt.Sprintf("P1 %s: ours %s MB/s, emmansun %s, encoding/base64 %s, copy() %s (ours/copy %.2f×)", name, render.Human(mb[0]), render.Human(mb[1]), render.Human(mb[2]), render.Human(mb[3]), mb[0]/mb[3])
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
			t.Why = append(t.Why, "P2: "+render.PairGap(p, fmt.Sprintf("≥ %g×", p.Want))+" "+r.p2Closing(big, p))
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
			t.Why = append(t.Why, l.id+": "+render.PairGap(p, fmt.Sprintf("≥ %g×", p.Want))+" "+r.laterClosing(l.id, p))
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
		_, need, _, _ := pair.Stats(render.Positive(p.Ref))
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

// medianGenCPU is the load generator's own median CPU per request against name.
func (f *p6FixedRate) medianGenCPU(name string) float64 {
	var v []float64
	for _, st := range f.runs[name] {
		v = append(v, st.gencpu)
	}
	return measure.Median(v)
}

func p7Target() *pair.Target {
	return &pair.Target{ID: "P7", Title: "3 nodes + nginx + SeaweedFS, loopback", Goal: "0 errors; links and sessions across nodes; no loss on node kill",
		NotRun: "not measured here: a pass/fail cluster check, not a ratio (`make cluster`, loadtest/cluster; docs/deploy.md)"}
}
