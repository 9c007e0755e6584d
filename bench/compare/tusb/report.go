package tusb

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// Report is one run of P11 and P12.
type Report struct {
	started time.Time
	elapsed time.Duration
	load    string
	steal   float64
	quick   bool
	plan    plan
	targets []*pair.Target
}

// Run measures P11 on both stores, then P12 on the local store, with the
// servers in opt.Bins, under work.
func Run(ctx context.Context, opt *Options, work string) *Report {
	g := &Report{started: time.Now().UTC(), quick: opt.Quick, plan: newPlan(opt.Quick), load: sysinfo.LoadAvg()}
	cpu0 := sysinfo.ReadCPUTimes()
	p11 := &pair.Target{ID: "P11", Title: "tus upload", Goal: "see below"}
	p12 := &pair.Target{ID: "P12", Title: "resume after a SIGKILL", Goal: "see below"}
	g.targets = []*pair.Target{p11, p12}
	measure.Logf("P11/P12: building the %d MiB body", g.plan.size>>20)
	raw, err := io.ReadAll(seed.Reader(g.plan.size))
	if err != nil {
		p11.NotRun, p12.NotRun = err.Error(), err.Error()
		return g
	}
	sum := seed.SHA256(g.plan.size)
	dir := filepath.Join(work, "tus")
	var stores []*storeResult
	local, err := startLocal(ctx, opt, filepath.Join(dir, "local"))
	if err != nil {
		p11.NotRun, p12.NotRun = "local store: "+err.Error(), "local store: "+err.Error()
		return g.end(cpu0)
	}
	stores = append(stores, runStore(ctx, local, raw, g.plan, sum))
	resumes := runP12(ctx, local.mcpblob, raw, g.plan, sum)
	local.stop()
	if s3, err := startS3(ctx, opt, filepath.Join(dir, "s3")); err != nil {
		p11.Errors = append(p11.Errors, "S3 store: "+err.Error())
	} else {
		stores = append(stores, runStore(ctx, s3, raw, g.plan, sum))
		s3.stop()
	}
	*p11 = *p11Target(g.plan, stores, p11.Errors)
	*p12 = *p12Target(g.plan, resumes)
	return g.end(cpu0)
}

func (g *Report) end(cpu0 sysinfo.CPUTimes) *Report {
	g.elapsed = time.Since(g.started)
	g.steal = sysinfo.StealSince(cpu0)
	return g
}

// Render is the body of RESULTS.md's tus section.
func (g *Report) Render(commit string) string {
	var b strings.Builder
	b.WriteString("## Resumable uploads (P11, P12, issue 27)\n\n")
	b.WriteString("Written by bench/compare (`make bench-compare`, or `go run ./compare -only P11` for this section alone); no number here is typed by hand. ")
	b.WriteString("mcpblob's tus 1.0.0 endpoint (`/v1/tus/`) driven by the harness's own raw tus client, beside `PUT /v1/blobs` of the same bytes on the same server and beside tusd v2.9.1 (the tus reference server) on the same kind of store, in one run.\n\n")
	if g.quick {
		fmt.Fprintf(&b, "> **-quick run**: %d MiB, one run per operation; a harness check, not a result.\n\n", g.plan.size>>20)
	}
	fmt.Fprintf(&b, "- date: %s; wall time %v; commit %s\n", g.started.Format("2006-01-02 15:04 UTC"), g.elapsed.Round(time.Second), commit)
	fmt.Fprintf(&b, "- load average when the run started: %s (on %d CPUs; above about 0.5 other jobs shared the machine, and every figure here, the references' too, was measured beside them); CPU steal %.1f %%\n\n", g.load, sysinfo.Cores(), g.steal)
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
	return b.String()
}

// WriteCharts draws the charts of the targets with pairs into dir.
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

// p11Why explains each miss of one store's pairs and bounds from its figures.
func p11Why(st *storeResult, p plan, vsPut, vsTusd pair.Runs, growth, written pair.Bound) []string {
	var why []string
	tus, put, td := measure.Median(vsPut.Ours), measure.Median(vsPut.Ref), measure.Median(vsTusd.Ref)
	if !vsPut.Met() && tus > 0 && put > 0 {
		why = append(why, fmt.Sprintf("%s: tus %.0f MB/s against one PUT's %.0f MB/s (median). %s", st.name, tus, put, patchWhy(st, p, put)+floorWhy(st, tus, put)))
	}
	if !vsTusd.Met() && tus > 0 && td > 0 {
		why = append(why, fmt.Sprintf("%s: tus %.0f MB/s against tusd's %.0f MB/s (median): an %d MiB PATCH took %.0f ms at mcpblob, %.0f ms at tusd (medians), the last one %.0f ms against %.0f ms; tusd wrote %s per byte uploaded, mcpblob %s%s.",
			st.name, tus, td, p.chunk>>20, medOf(st.samples[0], patchMedOf), medOf(st.samples[2], patchMedOf),
			medOf(st.samples[0], lastPatchOf), medOf(st.samples[2], lastPatchOf), writtenText(st, 2), writtenText(st, 0), tusdNote(st.name)))
	}
	if !growth.Met() {
		why = append(why, fmt.Sprintf("%s: mcpblob's RSS grew %.0f MiB > 64 MiB during a tus upload (its PUT of the same bytes: %.0f MiB at worst, tusd: %.0f MiB): a heap profile of the server during the PATCHes says what holds it.",
			st.name, growth.Value, worstOf(st.samples[1], growthOf), worstOf(st.samples[2], growthOf)))
	}
	if !written.Met() {
		why = append(why, fmt.Sprintf("%s: each uploaded byte reached the store %.2f times (%s): the bytes are written more than once, a second copy (e.g. the chunks kept apart, then the blob written from them at completion); appending them to the final object as they arrive (a file renamed into place, the object's own multipart upload) would close it.",
			st.name, written.Value, writtenMethod(st.name)))
	}
	return why
}

// patchWhy splits the tus upload's time into its PATCHes and the last one
// (which completes the upload) and says which part to shorten.
func patchWhy(st *storeResult, p plan, putMBps float64) string {
	med, last := medOf(st.samples[0], patchMedOf), medOf(st.samples[0], lastPatchOf)
	chunks := float64((p.size + p.chunk - 1) / p.chunk)
	putPerChunk := float64(p.chunk) / 1e6 / putMBps * 1000
	total := med*(chunks-1) + last
	s := fmt.Sprintf("An %d MiB PATCH took %.0f ms (median; PUT moved %d MiB every %.0f ms) and the last one, which completes the upload, %.0f ms: %.0f %% of the upload's time. ",
		p.chunk>>20, med, p.chunk>>20, putPerChunk, last, 100*last/max(total, 1))
	if last > 0.25*total {
		return s + "Completion is the larger cost: storing the blob without another pass over its bytes would close most of the gap."
	}
	return s + fmt.Sprintf("The per-chunk cost is the larger: %.0f ms per PATCH over streaming its bytes (making the chunk durable, replacing the upload's state before the answer); a server profile over the PATCHes says which costs most.", med-putPerChunk)
}

func patchMedOf(s sample) float64  { return s.patchMed }
func growthOf(s sample) float64    { return s.growth }
func lastPatchOf(s sample) float64 { return s.lastPatch }

// worstOf is the largest f over the samples.
func worstOf(ss []sample, f func(sample) float64) float64 {
	w := 0.0
	for _, s := range ss {
		w = max(w, f(s))
	}
	return w
}

// medOf is the median of f over the samples without an error.
func medOf(ss []sample, f func(sample) float64) float64 {
	var v []float64
	for _, s := range ss {
		if s.err == nil {
			v = append(v, f(s))
		}
	}
	return measure.Median(v)
}

// writtenText is the median bytes written per byte of operation i.
func writtenText(st *storeResult, i int) string {
	var v []float64
	for _, s := range st.samples[i] {
		v = append(v, s.written(st.name == "S3"))
	}
	return fmt.Sprintf("%.2f×", measure.Median(v))
}

func tusdNote(store string) string {
	if store == "local" {
		return "; tusd's file store appends each PATCH to one file and never fsyncs, mcpblob makes each chunk durable before it answers"
	}
	return "; tusd's S3 store uploads each 8 MiB PATCH as a part of the object's multipart upload, buffered in a temporary file on its own disk"
}

func writtenMethod(store string) string {
	if store == "local" {
		return "write_bytes of the mcpblob process in /proc/PID/io, which counts every page it dirties, a temporary file's too"
	}
	return "write_bytes of the SeaweedFS process: its volume files and the filer's metadata, so a server-side copy counts"
}
