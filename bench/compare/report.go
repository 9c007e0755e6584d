package main

import (
	"errors"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/gw"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"github.com/mcpblob/mcpblob/bench/compare/tusb"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/codecbench"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/mdsection"
	"github.com/mcpblob/mcpblob/loadtest/rig/probe"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// cell is one system's result on one workload.
type cell struct {
	system string
	pid    int
	mbps   float64
	runs   int
	ttfb   time.Duration
	peak   int64
	growth int64
	errs   []string
	perRun []float64 // MB/s by run (repetition) index, 0 where the run failed
}

// table is one workload at one size.
type table struct {
	id, title string
	size      int64
	cells     []cell
}

func (t *table) get(name string) *cell {
	if t == nil {
		return nil
	}
	for i := range t.cells {
		if t.cells[i].system == name {
			return &t.cells[i]
		}
	}
	return nil
}

// ratio is mcpblob's throughput over name's (0 when either is missing).
func (t *table) ratio(name string) float64 {
	m, o := t.get("mcpblob"), t.get(name)
	if m == nil || o == nil || m.mbps == 0 || o.mbps == 0 {
		return 0
	}
	return m.mbps / o.mbps
}

type report struct {
	started     time.Time
	elapsed     time.Duration
	cpuStart    sysinfo.CPUTimes // /proc/stat at start, for the steal share
	steal       float64          // percent of CPU time stolen by the hypervisor during the run
	quick       bool
	worktree    bool
	budgetHit   bool
	commit      string
	cpu, kernel string
	cores       int
	mem         int64
	versions    [][2]string
	features    probe.Features
	systems     []*system
	nginxErr    string
	s3Err       string
	integrity   []string
	integrityOK []string
	p2          []*table
	later       []*laterResult
	p3          *p3Result
	codec       *codecbench.Results
	p6sat       *p6Saturation // the verdict
	p6fixed     *p6FixedRate  // information
	p6Err       string
	// targets are outcomes other workloads add (P8–P10); they are
	// rendered with P1–P7 by the same generic code.
	targets []*pair.Target
	// g is the gateway targets G1–G3 (g.go), written as a section of their
	// own; nil when they did not run (the file's section is kept).
	g *gw.Report
	// tus is the resumable-upload targets P11 and P12 (package tusb),
	// written as the section "tus"; nil when they did not run (kept).
	tus *tusb.Report
}

func (r *report) fillEnv(root, weedBin string) {
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	r.commit = git("rev-parse", "--short=12", "HEAD")
	head := r.commit
	if st := git("status", "--porcelain", "--untracked-files=no"); st != "" {
		if r.worktree {
			r.commit += " plus uncommitted changes (-worktree)"
		} else {
			r.commit += " (mcpblob built from this commit; uncommitted changes in the tree were not measured)"
		}
	}
	r.cpu, r.kernel, r.cores, r.mem = sysinfo.CPUModel(), sysinfo.Kernel(), sysinfo.Cores(), sysinfo.MemTotal()
	modVer := func(path string) string {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", path)
		cmd.Dir = root + "/bench"
		out, err := cmd.Output()
		if err != nil {
			return "unknown"
		}
		return strings.TrimSpace(string(out))
	}
	r.versions = [][2]string{
		{"mcpblob", "commit " + head},
		{"Go", strings.TrimPrefix(runtime.Version(), "go")},
		{"github.com/modelcontextprotocol/go-sdk", modVer("github.com/modelcontextprotocol/go-sdk")},
		{"github.com/mark3labs/mcp-go", modVer("github.com/mark3labs/mcp-go")},
		{"github.com/emmansun/base64", modVer("github.com/emmansun/base64")},
		{"nginx", nginxVersion()},
		{"SeaweedFS", weed.Version(weedBin)},
		{"wrk (P6's load generator at saturation)", wrkVersion()},
		{"github.com/tsenart/vegeta/v12 (P6's fixed-rate load, in process)", modVer("github.com/tsenart/vegeta/v12")},
	}
}

func mib(b int64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func chartName(t *table) string {
	return strings.ToLower(t.id) + "-" + strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(t.title), " ", "-"), "/", "-") + ".svg"
}

// renderTable writes one workload table: throughput, ratio, first byte, memory.
func renderTable(b *strings.Builder, t *table, baselineName string) {
	fmt.Fprintf(b, "| system | MB/s (median) | runs | mcpblob ÷ system | first byte (median) | peak RSS | RSS growth | errors |\n")
	fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, c := range t.cells {
		ratio := "—"
		if c.system != "mcpblob" {
			if r := t.ratio(c.system); r > 0 {
				ratio = fmt.Sprintf("%.2f×", r)
			}
		}
		mbps := "—"
		if c.runs > 0 {
			mbps = render.Human(c.mbps)
		}
		ttfb := "—"
		if c.runs > 0 && c.ttfb > 0 {
			ttfb = fmt.Sprintf("%.2f ms", float64(c.ttfb)/1e6)
		}
		peak, growth := mib(c.peak), mib(c.growth)
		if c.pid == 0 {
			peak, growth = "n/a (in harness)", "n/a"
		} else if c.growth == 0 && c.peak > 0 {
			growth = "< 1 MiB"
		}
		errs := ""
		if len(c.errs) > 0 {
			errs = fmt.Sprintf("%d: %s", len(c.errs), strings.ReplaceAll(render.Trunc(c.errs[0], 120), "|", "/"))
		}
		name := c.system
		if name == "mcpblob" {
			name = "**mcpblob**"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", name, mbps, c.runs, ratio, ttfb, peak, growth, errs)
	}
	_ = baselineName
}

// laterMethod says how P3–P5 are measured, above their tables.
var laterMethod = map[string]string{
	"P4": "The same request body (built once in memory) to every server; mcpblob stores the decoded bytes durably (fsync before it answers), the peers decode into memory. mcpblob's three runs come first, then three runs per peer (run i of each pairs with mcpblob's run i): in trials on this VM, an mcpblob upload right after a go-sdk run (which leaves a multi-GiB heap behind) ran at 150–270 MB/s against 450–800 MB/s otherwise, with the idle peer using no CPU meanwhile (likely the page cache waiting for memory the VM gets back from the host). Every run starts after sync(2), so none pays for an earlier run's writeback.\n\n",
	"P5": "mcpblob: POST /v1/uploads mints an endpoint, then a multipart/form-data POST streams the generated bytes to it (stored durably before the answer). Raw disk write: the harness writes the same generated bytes to a file and fsyncs it. Every run starts after sync(2).\n\n",
}

// diskMBps is the raw disk write baseline of P5, when it ran.
func (r *report) diskMBps() float64 {
	for _, l := range r.later {
		if l.id == "P5" && l.table != nil {
			if c := l.table.get("raw disk write"); c != nil {
				return c.mbps
			}
		}
	}
	return 0
}

// write renders RESULTS.md, keeping the codec section when it was not
// re-measured, and the sections other programs write (smallreq, tracing,
// statestorm).
func (r *report) write(path string, keepCodec bool) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(path, []byte(r.render(old, keepCodec)), 0o644)
}

// render is the whole file, keeping from old the sections this run did not
// measure.
func (r *report) render(old []byte, keepCodec bool) string {
	codecSection := "(not yet run)\n"
	if kept, ok := mdsection.Extract(string(old), "codec"); ok && keepCodec {
		codecSection = kept
	}
	if r.codec != nil {
		codecSection = r.codec.Render()
	}

	var b strings.Builder
	b.WriteString("# mcpblob benchmark results\n\n")
	b.WriteString("Written by `make bench-compare` (bench/compare) in one run on one machine; no number here is typed by hand.\n")
	b.WriteString("Targets are those of [docs/design.md](../docs/design.md#performance-targets). How to run each piece and what each number means: [README.md](README.md).\n\n")
	if r.quick {
		b.WriteString("> **-quick run**: one or two runs per pair, smaller P3–P5 objects, no 64 MiB read, P6 in 2 rounds of 3 s; a harness check, not a result.\n\n")
	}
	if r.budgetHit {
		b.WriteString("> The time budget ran out: some measurements were skipped (cells with 0 runs).\n\n")
	}
	fmt.Fprintf(&b, "- date: %s; bench-compare wall time %v\n", r.started.Format("2006-01-02 15:04 UTC"), r.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- commit: %s\n", r.commit)
	fmt.Fprintf(&b, "- CPU steal during the run: %.1f %% (time the hypervisor gave these CPUs to other guests; every number here is slower by about that much, peers and mcpblob alike)\n", r.steal)
	fmt.Fprintf(&b, "- machine: %s, %d logical CPUs, %.0f GiB RAM, %s (servers, clients and load generators share these CPUs, except in P6: its servers on CPU 0, wrk on CPU 1)\n", r.cpu, r.cores, float64(r.mem)/(1<<30), r.kernel)
	b.WriteString("- versions: ")
	for i, v := range r.versions {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", v[0], v[1])
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- server features found by probing: upload_file tool %v, resources.stream %v, control API %v, upload endpoints %v\n", r.features.UploadFile, r.features.ResourceStream, r.features.ControlAPI, r.features.Uploads)
	if len(r.integrity) > 0 {
		fmt.Fprintf(&b, "- **integrity check failed**: %s\n", strings.Join(r.integrity, "; "))
	} else {
		fmt.Fprintf(&b, "- integrity: 1 MiB resources/read decoded and sha256-checked on %s\n", strings.Join(r.integrityOK, ", "))
	}

	ts := r.allTargets()
	b.WriteString("\n## Targets\n\n")
	render.Targets(&b, ts)
	for _, t := range ts {
		if t.ID == "P1" || t.ID == "P7" {
			continue // the codec section closes the file; P7 is `make cluster`
		}
		fmt.Fprintf(&b, "\n## %s: %s\n\nTarget: %s. Verdict: %s.\n\n", t.ID, t.Title, t.Goal, render.Verdict(t))
		r.writeDetail(&b, t)
	}

	b.WriteString("\n## P1: base64 codec\n\n")
	b.WriteString("internal/codecbench (also `make bench-codec`): ours vs emmansun/base64 vs encoding/base64 vs copy(), in-process.\n\n")
	begin, end := mdsection.Markers("codec")
	b.WriteString(begin + "\n" + codecSection + end + "\n")
	for _, kept := range []string{"gateway", "tus", "smallreq", "tracing", "statestorm"} { // G1–G3 (-only G), P11–P12 (-only P11), bench/smallreq, tracing, loadtest/hardening
		body, ok := mdsection.Extract(string(old), kept)
		if kept == "gateway" && r.g != nil {
			body, ok = r.g.Render(r.commit), true
		}
		if kept == "tus" && r.tus != nil {
			body, ok = r.tus.Render(r.commit), true
		}
		if ok {
			begin, end := mdsection.Markers(kept)
			b.WriteString("\n" + begin + "\n" + body + end + "\n")
		}
	}
	if r.codec != nil {
		b.WriteString("\n![P1 encode](charts/p1-codec-encode.svg)\n![P1 decode](charts/p1-codec-decode.svg)\n")
	}
	return b.String()
}

// writeOnly writes a run of target id alone (-only): its parts of the file
// replace the old ones and the rest stays (render.SpliceTargets); a file without
// them is written whole.
func (r *report) writeOnly(path, id string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fresh := r.render(old, true)
	note := fmt.Sprintf("Measured alone (`-only %s`): date %s, wall time %v, commit %s, CPU steal %.1f %%; the other targets are from the run in the header.",
		id, r.started.Format("2006-01-02 15:04 UTC"), r.elapsed.Round(time.Second), r.commit, r.steal)
	if spliced, ok := render.SpliceTargets(string(old), fresh, []string{id}, note); ok {
		fresh = spliced
	}
	return os.WriteFile(path, []byte(fresh), 0o644)
}

// writeDetail is a target's section body: the workload's own tables for
// P2–P6, the target's Detail for any other.
func (r *report) writeDetail(b *strings.Builder, t *pair.Target) {
	switch t.ID {
	case "P2":
		r.writeP2Detail(b)
	case "P4", "P5":
		for _, l := range r.later {
			if l.id == t.ID && l.table != nil {
				b.WriteString(laterMethod[l.id])
				renderTable(b, l.table, "")
				fmt.Fprintf(b, "\n![%s](charts/%s)\n", l.title, chartName(l.table))
			}
		}
	case "P6":
		r.renderDetailP6(b)
	default:
		if t.Detail != "" {
			b.WriteString(t.Detail + "\n")
		}
	}
	if t.NotRun != "" {
		fmt.Fprintf(b, "Not run: %s.\n", t.NotRun)
	}
}

// writeP2Detail is the P2 tables at every size (the 256 MiB one holds the
// target; the others are information).
func (r *report) writeP2Detail(b *strings.Builder) {
	b.WriteString("resources/read (base64 JSON) against the peers, nginx, SeaweedFS and raw TCP. MB/s counts raw blob bytes (10^6 B/s) for every system; MCP servers send 4/3 as many bytes as base64. ")
	b.WriteString("Small sizes repeat reads on one kept-alive connection for ≥ 0.4 s per run; 64 MiB and up time one read per run. ")
	b.WriteString("Systems take turns within each repetition, so run i of mcpblob and run i of a reference are side by side. First byte: from sending the request to the first body byte. ")
	b.WriteString("Peak RSS: the serving process's VmHWM during the runs; growth: peak minus its idle RSS after start.\n\n")
	b.WriteString("Systems: ")
	for i, s := range r.systems {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(b, "%s — %s", s.name, s.note)
	}
	b.WriteString(".\n")
	if r.nginxErr != "" {
		fmt.Fprintf(b, "\nnginx: %s\n", r.nginxErr)
	}
	if r.s3Err != "" {
		fmt.Fprintf(b, "\nSeaweedFS: %s\n", r.s3Err)
	}
	for _, t := range r.p2 {
		fmt.Fprintf(b, "\n### %s\n\n", t.title)
		renderTable(b, t, "")
		fmt.Fprintf(b, "\n![%s](charts/%s)\n", t.title, chartName(t))
	}
	if t := r.p2Largest(); t != nil {
		fmt.Fprintf(b, "\n![RSS growth, %s](charts/p2-rss-growth.svg)\n", t.title)
	}
}

func (r *report) p2Largest() *table {
	if len(r.p2) == 0 {
		return nil
	}
	return r.p2[len(r.p2)-1]
}

func throughputBars(t *table) []render.Bar {
	var bars []render.Bar
	for _, c := range t.cells {
		b := render.Bar{Label: c.system, Value: c.mbps, Mark: c.system == "mcpblob"}
		if c.runs == 0 {
			b.Text = "n/a"
		}
		bars = append(bars, b)
	}
	return bars
}

func (r *report) writeCharts(dir string) error {
	for _, t := range r.p2 {
		if err := render.WriteChart(dir, chartName(t), render.BarChart("P2 "+t.title+": throughput (raw MB/s, higher is better)", "MB/s", throughputBars(t))); err != nil {
			return err
		}
	}
	if t := r.p2Largest(); t != nil {
		var bars []render.Bar
		for _, c := range t.cells {
			if c.pid == 0 {
				continue
			}
			bars = append(bars, render.Bar{Label: c.system, Value: float64(c.growth) / (1 << 20), Mark: c.system == "mcpblob", Text: mib(c.growth)})
		}
		if err := render.WriteChart(dir, "p2-rss-growth.svg", render.BarChart("P2 "+t.title+": RSS growth of the server (lower is better)", "MiB", bars)); err != nil {
			return err
		}
	}
	for _, l := range r.later {
		if l.table != nil {
			if err := render.WriteChart(dir, chartName(l.table), render.BarChart(l.id+" "+l.title+": throughput (MB/s)", "MB/s", throughputBars(l.table))); err != nil {
				return err
			}
		}
	}
	if r.p6sat != nil {
		if err := render.WriteChart(dir, "p6-saturation.svg", r.p6sat.chart()); err != nil {
			return err
		}
	}
	for _, t := range r.allTargets() {
		if len(t.Pairs) > 0 {
			if err := render.WriteChart(dir, render.TargetChartName(t), render.TargetChart(t)); err != nil {
				return err
			}
		}
	}
	if f := r.p6fixed; f != nil {
		var bars []render.Bar
		for _, name := range f.systems {
			bars = append(bars, render.Bar{Label: name, Value: measure.Median(f.cpuRuns(name)), Mark: name == "mcpblob"})
		}
		title := fmt.Sprintf("P6 server CPU per request at %d req/s (median run, lower is better)", f.rate)
		if err := render.WriteChart(dir, "p6-cpu-per-request.svg", render.BarChart(title, "µs", bars)); err != nil {
			return err
		}
	}
	if r.g != nil {
		if err := r.g.WriteCharts(dir); err != nil {
			return err
		}
	}
	if r.tus != nil {
		if err := r.tus.WriteCharts(dir); err != nil {
			return err
		}
	}
	if r.codec != nil {
		names := codecbench.Impls()
		for op, opName := range []string{"encode", "decode"} {
			var bars []render.Bar
			for si, sz := range codecbench.Sizes() {
				for ii, im := range names {
					bars = append(bars, render.Bar{Label: sz + " " + im, Value: r.codec.MBps[si][op][ii], Mark: im == "ours"})
				}
			}
			if err := render.WriteChart(dir, "p1-codec-"+opName+".svg", render.BarChart("P1 base64 "+opName+" (MB/s of raw bytes, higher is better)", "MB/s", bars)); err != nil {
				return err
			}
		}
	}
	return nil
}
