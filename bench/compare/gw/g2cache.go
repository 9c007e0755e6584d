package gw

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// G2's cache half: a download from the stream cache (resources/stream, a
// 302 to a /d link of the local store, sendfile) against nginx sendfile of
// the same bytes: the same file, the store's copy, hard-linked into
// nginx's folder, so both servers send the very same page-cache pages.
// nginx's own copy (the upstream's file) runs beside them as information:
// the two copies sit in the page cache in different folio sizes, and in
// single runs of 21 rounds nginx sent the store's file at 0.88–1.09× the
// rate of its own copy. Both sides are measured alike: the same client code and
// transport settings; both files read through the page cache before every
// round (the store's writer drops most of what it writes from the cache);
// each file's residency and mean folio size read just before its run
// (sendfile costs both ends per folio piece); and both servers watched the
// same way (peak RSS, CPU time).

// cacheSide is one side's figures per run.
type cacheSide struct {
	rate     []float64 // MB/s from the request to the last byte
	first    []float64 // ms to the first body byte
	after    []float64 // MB/s from the first body byte to the last
	cpu      []float64 // ms of the serving process's CPU time (10 ms ticks)
	resident []float64 // share of the served copy's pages cached before the run
	folio    []float64 // mean folio of the served copy's cached pages (pages; none when unreadable)
	growth   []int64   // the serving process's RSS growth
}

// add records one run of the side: el and ttfb timed by the client, the
// serving process's CPU time spent, its peak RSS, the copy's residency and
// its mean folio.
func (s *cacheSide) add(res *g2Result, el, ttfb, cpu time.Duration, err error, what string, growth int64, resident, folio float64) {
	s.rate = append(s.rate, res.rate(el, err, what))
	s.first = append(s.first, ms(ttfb))
	s.after = append(s.after, measure.MBps(res.size, el-ttfb))
	s.cpu = append(s.cpu, ms(cpu))
	s.growth = append(s.growth, growth)
	s.resident = append(s.resident, resident)
	s.folio = append(s.folio, folio)
}

// caching fills the stream cache with one download (checking its sha256)
// and warms it with one hit, links the store's copy into nginx's folder,
// then runs rounds of a cache hit, an nginx GET of that same file and one
// of nginx's own copy, in rotating order, both files warmed before each
// round.
func (res *g2Result) caching(ctx context.Context, rig *g23Rig, plan gPlan, sum string) {
	buf := make([]byte, 256<<10)
	measure.Logf("G2 stream cache: one download filling it, then %d rounds of a cache hit, nginx on the same file and nginx on its own copy", plan.g2Hits)
	if !res.fillCache(ctx, rig, buf, sum) {
		return
	}
	ours, err := storeCopy(rig.cacheData, res.size)
	if err != nil {
		res.errs = append(res.errs, "stream cache: "+err.Error())
		return
	}
	theirs := filepath.Join(rig.files, gKeyStream)
	if err := os.Link(ours, filepath.Join(rig.files, gKeyStoreCopy)); err != nil {
		res.errs = append(res.errs, "linking the store's copy for nginx: "+err.Error())
		return
	}
	defer os.Remove(filepath.Join(rig.files, gKeyStoreCopy))
	for _, key := range []string{gKeyStoreCopy, gKeyStream} { // as the warm-up hit
		if _, _, err := rig.nginx.fetch(ctx, key, res.size, buf); err != nil {
			res.errs = append(res.errs, "nginx warm-up: "+err.Error())
		}
	}
	runs := []func(){
		func() { res.hitOnce(ctx, rig, ours, buf) },
		func() { res.nginxOnce(ctx, rig, &res.nginx, gKeyStoreCopy, ours, buf) },
		func() { res.nginxOnce(ctx, rig, &res.nginxOwn, gKeyStream, theirs, buf) },
	}
	for r := range plan.g2Hits {
		for _, p := range []string{ours, theirs} {
			if err := measure.WarmFile(p); err != nil {
				res.errs = append(res.errs, "warming "+filepath.Base(p)+": "+err.Error())
			}
		}
		for k := range runs {
			runs[(k+r)%len(runs)]()
		}
		measure.Logf("  G2 cache round %d: hit %.0f MB/s, nginx on the same file %.0f, nginx on its own copy %.0f", r+1, last(res.hit.rate), last(res.nginx.rate), last(res.nginxOwn.rate))
	}
}

// fillCache runs the download that fills the cache and one hit, checking
// the bytes of both and that only the second came from the store. It
// reports whether the cache is ready for the counted hits.
func (res *g2Result) fillCache(ctx context.Context, rig *g23Rig, buf []byte, sum string) bool {
	c, hit := rig.cache.mcp, rig.redirected[rig.cache.mcp]
	ok := true
	for i, what := range []string{"first download (fills the cache)", "warm-up hit"} {
		*hit = false
		h := sha256.New()
		w := measure.WatchPeak(rig.cache.pid())
		el, err := gStream(ctx, c, "blob:///"+gKeyStream, res.size, buf, h)
		res.cacheGrowth = append(res.cacheGrowth, max(0, w.End()-rig.cache.baseline))
		if err == nil && hex.EncodeToString(h.Sum(nil)) != sum {
			err = fmt.Errorf("sha256 %x, want %s", h.Sum(nil), sum)
		}
		if err == nil && *hit != (i == 1) {
			err = fmt.Errorf("redirected to the store: %v, want %v", *hit, i == 1)
		}
		if r := res.rate(el, err, "stream cache, "+what); i == 0 {
			res.miss = r
		}
		ok = ok && err == nil
	}
	return ok
}

// storeCopy finds the cache's copy of the blob in the store's folder: the
// one file of that size.
func storeCopy(dir string, size int64) (string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Size() == size {
			found = append(found, p)
		}
		return nil
	})
	if err == nil && len(found) != 1 {
		err = fmt.Errorf("%d files of %d bytes in %s, want the cached copy alone", len(found), size, dir)
	}
	if err != nil {
		return "", err
	}
	return found[0], nil
}

// nginxOnce is one GET of key from nginx (the file at path), recorded in
// side.
func (res *g2Result) nginxOnce(ctx context.Context, rig *g23Rig, side *cacheSide, key, path string, buf []byte) {
	resident, folio := cacheState(path)
	pid := rig.nginx.pid()
	w, cpu0 := measure.WatchPeak(pid), procCPU(pid)
	t0 := time.Now()
	_, ttfb, err := rig.nginx.fetch(ctx, key, res.size, buf)
	el := time.Since(t0)
	side.add(res, el, ttfb, procCPU(pid)-cpu0, err, "nginx "+key, max(0, w.End()-rig.nginx.baseline), resident, folio)
}

// hitOnce is one download served from the stream cache: a fresh
// resources/stream, the 302 to the store's /d link, the /d GET.
func (res *g2Result) hitOnce(ctx context.Context, rig *g23Rig, path string, buf []byte) {
	resident, folio := cacheState(path)
	hit, pid := rig.redirected[rig.cache.mcp], rig.cache.pid()
	*hit = false
	w, cpu0 := measure.WatchPeak(pid), procCPU(pid)
	el, ttfb, err := gStreamTimed(ctx, rig.cache.mcp, "blob:///"+gKeyStream, res.size, buf, nil)
	cpu := procCPU(pid) - cpu0
	if err == nil && !*hit {
		err = fmt.Errorf("not served from the stream cache (no redirect to the store)")
	}
	growth := max(0, w.End()-rig.cache.baseline)
	res.cacheGrowth = append(res.cacheGrowth, growth)
	res.hit.add(res, el, ttfb, cpu, err, "stream cache hit", growth, resident, folio)
}

// cacheState is the share of path's pages in the page cache and their
// mean folio in pages (0 when it cannot be read).
func cacheState(path string) (resident, folio float64) {
	resident, _ = measure.Residency(path)
	folio, _ = measure.FolioPages(path)
	return resident, folio
}

// procCPU is pid's CPU time so far (0 when it cannot be read).
func procCPU(pid int) time.Duration {
	d, _ := sysinfo.ProcCPU(pid)
	return d
}

// hitWhy gives a cache-hit miss its figures: where the time goes (before
// the first byte or after it), what each server spent, and the cache state.
func (res *g2Result) hitWhy() string {
	h, n := &res.hit, &res.nginx
	if len(h.rate) == 0 || len(n.rate) == 0 {
		return "No pair ran: the errors above say why."
	}
	return fmt.Sprintf("Medians: the hit's first byte came after %.1f ms (a resources/stream call, the 302 from /g to /d, the /d GET) and nginx's after %.1f ms; after it, %.0f MB/s from the store and %.0f MB/s from nginx; the serving process spent %.0f ms of CPU per download and nginx %.0f ms; before its run each copy was at least %.0f %% (store) and %.0f %% (nginx) in the page cache, in folios of %s pages (store) and %s (nginx). Both bodies go out by sendfile (TestGatewayCacheHitSendfile) from the same file; when the rates after the first byte trail too and the CPU per download does not, the transfers waited for a CPU (the load average above): compare the runs' spread before looking for a cost in the /d path.%s",
		measure.Median(h.first), measure.Median(n.first), measure.Median(h.after), measure.Median(n.after),
		measure.Median(h.cpu), measure.Median(n.cpu), 100*minOf(h.resident), 100*minOf(n.resident), folioText(h.folio), folioText(n.folio), res.ownCopyText())
}

// ownCopyText compares nginx on its own copy with nginx on the store's
// file ("" when that side did not run).
func (res *g2Result) ownCopyText() string {
	o, n := &res.nginxOwn, &res.nginx
	if len(o.rate) == 0 || len(n.rate) == 0 {
		return ""
	}
	_, med, _, _ := pair.Runs{Ours: n.rate, Ref: o.rate}.Spread()
	return fmt.Sprintf(" nginx sending its own copy of the bytes (information): %.0f MB/s in folios of %s pages; nginx on the store's file ÷ nginx on its own copy: %.2f× (median of rounds).",
		measure.Median(o.rate), folioText(o.folio), med)
}

// folioText is the median folio in pages, or "unknown" where FolioPages
// could not read it.
func folioText(v []float64) string {
	if minOf(v) <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f", measure.Median(v))
}

// cacheRows adds the cache half's rows to G2's table.
func (res *g2Result) cacheRows(row func(name string, v []float64, unit string)) {
	for _, s := range []struct {
		name string
		side *cacheSide
	}{{"stream cache hit", &res.hit}, {"nginx sendfile, the same file", &res.nginx}, {"nginx sendfile, its own copy (information)", &res.nginxOwn}} {
		row(s.name+", MB/s", s.side.rate, "MB/s")
		row(s.name+": first byte (ms)", s.side.first, "ms")
		row(s.name+": MB/s after the first byte", s.side.after, "MB/s")
		row(s.name+": server CPU per download (ms)", s.side.cpu, "ms")
		row(s.name+": copy cached before the run (%)", scale(s.side.resident, 100), "%")
		if minOf(s.side.folio) > 0 { // readable (root) in every run
			row(s.name+": the copy's pages per folio before the run", s.side.folio, "pages")
		}
	}
	row("nginx RSS growth per GET (MiB)", mibs(res.nginx.growth), "MiB")
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Min(v)
}

func scale(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = k * x
	}
	return out
}
