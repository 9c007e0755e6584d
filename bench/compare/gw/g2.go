package gw

import (
	"context"
	"fmt"
	"hash"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// G2, stream conversion: resources/stream of the upstream's blob through
// the gateway's downloadUrl (the upstream's resources/read decoded as it
// arrives) against the upstream's own resources/read, in decoded bytes per
// second; then, on a second gateway with the stream cache, the download
// that fills the cache and later ones served from it (302 to a /d link,
// sendfile from the local store) against nginx sendfile of the same bytes.
// G3 (g3.go) runs on a third gateway of the same rig. The servers are not
// pinned (as in P2).

// g23Rig is G2's and G3's servers.
type g23Rig struct {
	procs                             []*proc.Proc
	upstream, noCache, cache, offload *system
	nginx                             *system
	redirected                        map[*mcpc.Client]*bool // set when a download followed a redirect
	files, cacheData                  string                 // the upstream's (and nginx's) folder, the cache gateway's store
}

func (r *g23Rig) stop() {
	for _, p := range r.procs {
		p.Stop()
	}
}

// startG23Rig starts the upstream, three gateways in front of it (without
// the stream cache for G2's conversion, with it for G2's cache, one for
// G3's offload) and nginx on the upstream's files, opens a session on each
// MCP server and takes its idle RSS after a warm-up.
func startG23Rig(ctx context.Context, cfg *Options, dir string, bins map[string]string, files string) (*g23Rig, error) {
	d := filepath.Join(dir, "g23")
	r := &g23Rig{redirected: map[*mcpc.Client]*bool{}, files: files, cacheData: filepath.Join(d, "cache")}
	start := func(name, bin string, args ...string) (*system, error) {
		addr, err := proc.FreeAddr()
		if err != nil {
			return nil, err
		}
		p, err := proc.Start(name, "http://"+addr+"/readyz", bin, append(args, "--listen", addr))
		if err != nil {
			return nil, err
		}
		r.procs = append(r.procs, p)
		return &system{name: name, proc: p, base: "http://" + addr}, nil
	}
	var err error
	if r.upstream, err = start("upstream", bins["gosdk"], "-dir", files); err != nil {
		return r, err
	}
	gw := func(name, data string, extra ...string) (*system, error) {
		return start(name, bins["mcpblob"], append([]string{"serve", "--upstream", r.upstream.base + "/mcp", "--data", filepath.Join(d, data)}, extra...)...)
	}
	if r.noCache, err = gw("gateway", "nocache", "--stream-cache=false"); err != nil {
		return r, err
	}
	if r.cache, err = gw("gateway (stream cache)", "cache"); err != nil {
		return r, err
	}
	if r.offload, err = gw("gateway (G3)", "offload"); err != nil {
		return r, err
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		return r, err
	}
	p, err := cfg.StartNginx(filepath.Join(d, "nginx"), files, addr)
	if err != nil {
		return r, fmt.Errorf("nginx: %w", err)
	}
	r.procs = append(r.procs, p)
	r.nginx = &system{name: "nginx", proc: p, base: "http://" + addr, plain: true}
	return r, r.open(ctx)
}

// open starts a session (declaring resourceStreaming) on every MCP server
// of the rig, warms each up with a 4 KiB read and a 4 KiB stream, and
// takes its idle RSS.
func (r *g23Rig) open(ctx context.Context) error {
	buf := make([]byte, 256<<10)
	for _, s := range []*system{r.upstream, r.noCache, r.cache, r.offload} {
		s.mcp = mcpc.New(s.base + "/mcp")
		flag := new(bool)
		r.redirected[s.mcp] = flag
		s.mcp.HTTP.CheckRedirect = func(*http.Request, []*http.Request) error { *flag = true; return nil }
		if err := s.mcp.Init(ctx, map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": 1 << 40}}); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if _, _, err := s.fetch(ctx, gKeySmall, 4<<10, buf); err != nil {
			return fmt.Errorf("%s: warm-up read: %w", s.name, err)
		}
		if s != r.upstream {
			if _, err := gStream(ctx, s.mcp, "blob:///"+gKeySmall, 4<<10, buf, nil); err != nil {
				return fmt.Errorf("%s: warm-up stream: %w", s.name, err)
			}
		}
		time.Sleep(100 * time.Millisecond)
		if m, err := sysinfo.ReadMem(s.pid()); err == nil {
			s.baseline = m.RSS
		}
	}
	if m, err := sysinfo.ReadMem(r.nginx.pid()); err == nil {
		r.nginx.baseline = m.RSS
	}
	return nil
}

// gStream runs resources/stream of uri on c and reads the bytes (hashing
// them into h when given): the downloadUrl's GET, following any redirect.
// It returns the time from the request to the last byte.
func gStream(ctx context.Context, c *mcpc.Client, uri string, size int64, buf []byte, h hash.Hash) (time.Duration, error) {
	el, _, err := gStreamTimed(ctx, c, uri, size, buf, h)
	return el, err
}

// gStreamTimed is gStream, also returning the time to the first body byte.
func gStreamTimed(ctx context.Context, c *mcpc.Client, uri string, size int64, buf []byte, h hash.Hash) (time.Duration, time.Duration, error) {
	t0 := time.Now()
	var res struct {
		DownloadURL string `json:"downloadUrl"`
	}
	if err := c.Call(ctx, "resources/stream", map[string]string{"uri": uri}, &res); err != nil {
		return 0, 0, err
	}
	if res.DownloadURL == "" {
		return 0, 0, fmt.Errorf("resources/stream %s: no downloadUrl", uri)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, res.DownloadURL, nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var w io.Writer = io.Discard
	if h != nil {
		w = h
	}
	k, err := io.ReadAtLeast(resp.Body, buf[:1], 1)
	ttfb := time.Since(t0)
	w.Write(buf[:k])
	n := int64(k)
	if err == nil {
		var m int64
		m, err = io.CopyBuffer(w, struct{ io.Reader }{resp.Body}, buf)
		n += m
	}
	el := time.Since(t0)
	switch {
	case err != nil:
		return el, ttfb, err
	case resp.StatusCode != http.StatusOK:
		return el, ttfb, fmt.Errorf("download: http %d", resp.StatusCode)
	case n != size:
		return el, ttfb, fmt.Errorf("download: %d bytes, want %d", n, size)
	}
	return el, ttfb, nil
}

// g2Result is G2's figures per run.
type g2Result struct {
	size                    int64
	upRead, conv            []float64 // MB/s of decoded (raw) bytes
	upFirst, convFirst      []float64 // ms to the first body byte (the upstream builds its answer first)
	upAfter, convAfter      []float64 // MB/s of decoded bytes from the first body byte to the last
	convGrowth, cacheGrowth []int64   // gateways' RSS growth per run
	upGrowth                []int64   // the upstream's RSS growth per read (information)
	hit, nginx              cacheSide // the cache hits and nginx's GETs of the same file
	nginxOwn                cacheSide // nginx's GETs of its own copy (information)
	miss                    float64   // MB/s of the download that filled the cache
	errs                    []string
}

// runG23 starts the rig and measures G2 and G3.
func runG23(ctx context.Context, cfg *Options, dir string, bins map[string]string, files string, plan gPlan, sums map[string]string) []*pair.Target {
	t2 := &pair.Target{ID: "G2", Title: fmt.Sprintf("gateway stream conversion, %d MiB", plan.stream>>20), Goal: "resources/stream ≥ 0.9× the upstream's resources/read (decoded bytes/s); RSS growth ≤ 32 MiB; cache hit ≥ 0.9× nginx sendfile"}
	t3 := &pair.Target{ID: "G3", Title: fmt.Sprintf("gateway offload of a %d MiB image from tools/call", plan.image>>20), Goal: "a resource_link in the result; RSS growth ≤ 32 MiB; bytes read back sha256-equal to the upstream's"}
	rig, err := startG23Rig(ctx, cfg, dir, bins, files)
	defer rig.stop()
	if err != nil {
		t2.NotRun, t3.NotRun = render.Trunc(err.Error(), 300), render.Trunc(err.Error(), 300)
		return []*pair.Target{t2, t3}
	}
	res := &g2Result{size: plan.stream}
	res.conversion(ctx, rig, plan)
	res.caching(ctx, rig, plan, sums[gKeyStream])
	res.target(t2)
	runG3(ctx, rig, plan, sums[gKeyImage], t3)
	return []*pair.Target{t2, t3}
}

// conversion alternates the upstream's resources/read and the gateway's
// resources/stream of the same blob.
func (res *g2Result) conversion(ctx context.Context, rig *g23Rig, plan gPlan) {
	buf := make([]byte, 256<<10)
	measure.Logf("G2 conversion %d MiB: %d runs, upstream resources/read and gateway resources/stream in turns", res.size>>20, plan.g2Runs)
	for r := range plan.g2Runs {
		for k := range 2 {
			if (k+r)%2 == 0 {
				w := measure.WatchPeak(rig.upstream.pid())
				t0 := time.Now()
				_, ttfb, err := rig.upstream.fetch(ctx, gKeyStream, res.size, buf)
				el := time.Since(t0)
				res.upRead = append(res.upRead, res.rate(el, err, "upstream resources/read"))
				res.upFirst, res.upAfter = append(res.upFirst, ms(ttfb)), append(res.upAfter, measure.MBps(res.size, el-ttfb))
				res.upGrowth = append(res.upGrowth, max(0, w.End()-rig.upstream.baseline))
				continue
			}
			w := measure.WatchPeak(rig.noCache.pid())
			el, ttfb, err := gStreamTimed(ctx, rig.noCache.mcp, "blob:///"+gKeyStream, res.size, buf, nil)
			res.conv = append(res.conv, res.rate(el, err, "gateway resources/stream"))
			res.convFirst, res.convAfter = append(res.convFirst, ms(ttfb)), append(res.convAfter, measure.MBps(res.size, el-ttfb))
			res.convGrowth = append(res.convGrowth, max(0, w.End()-rig.noCache.baseline))
		}
		measure.Logf("  G2 run %d: upstream resources/read %.0f MB/s, gateway resources/stream %.0f MB/s (RSS growth %s)", r+1, last(res.upRead), last(res.conv), mib(res.convGrowth[len(res.convGrowth)-1]))
	}
}

// rate is a run's MB/s of decoded bytes, 0 (and an error kept) when it failed.
func (res *g2Result) rate(el time.Duration, err error, what string) float64 {
	if err != nil {
		res.errs = append(res.errs, what+": "+render.Trunc(err.Error(), 200))
		return 0
	}
	return measure.MBps(res.size, el)
}

// target fills t: the two pairs, the RSS bounds, errors, miss lines, detail.
func (res *g2Result) target(t *pair.Target) {
	t.Pairs = []pair.Runs{
		{Label: "gateway resources/stream ÷ upstream resources/read", Unit: "MB/s", Ours: res.conv, Ref: res.upRead, RefName: "upstream resources/read (decoded)", Want: 0.9},
		{Label: "stream cache hit ÷ nginx sendfile", Unit: "MB/s", Ours: res.hit.rate, Ref: res.nginx.rate, RefName: "nginx sendfile of the same file", Want: 0.9},
	}
	t.Bounds = []pair.Bound{
		{Label: "RSS growth, conversion (worst run)", Value: maxMiB(res.convGrowth), Limit: 32, Unit: "MiB"},
		{Label: "RSS growth, cache fill and hits (worst run)", Value: maxMiB(res.cacheGrowth), Limit: 32, Unit: "MiB"},
	}
	t.Errors = res.errs
	if p := t.Pairs[0]; !p.Met() {
		t.Why = append(t.Why, "G2: "+render.PairGap(p, "≥ 0.9×")+" "+res.convWhy())
	}
	if p := t.Pairs[1]; !p.Met() {
		t.Why = append(t.Why, "G2: "+render.PairGap(p, "≥ 0.9×")+" "+res.hitWhy())
	}
	for _, b := range t.Bounds {
		if !b.Met() {
			t.Why = append(t.Why, fmt.Sprintf("G2: %s %.0f MiB > 32 MiB: something holds the blob; a heap profile of the gateway during a download says what.", b.Label, b.Value))
		}
	}
	t.Detail = res.detail()
}

// convWhy splits a conversion miss between the upstream's time to its
// first byte (building the whole answer) and the transfer after it.
func (res *g2Result) convWhy() string {
	uf, cf := measure.Median(res.upFirst), measure.Median(res.convFirst)
	ua, ca := measure.Median(res.upAfter), measure.Median(res.convAfter)
	return fmt.Sprintf("Medians: the first byte came after %.0f ms directly and %.0f ms through the gateway (the upstream builds its whole answer before it sends a byte, whoever asks); after it, %.0f MB/s directly and %.0f MB/s through the gateway (its decode and the second loopback hop). The larger gap is where the time goes; under CPU contention (the load average above) each process of the longer path also waits for a CPU.", uf, cf, ua, ca)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func maxMiB(v []int64) float64 {
	var m int64
	for _, x := range v {
		m = max(m, x)
	}
	return float64(m) / (1 << 20)
}

// detail is G2's table.
func (res *g2Result) detail() string {
	var b strings.Builder
	b.WriteString("MB/s are decoded (raw) bytes, 10^6 B/s, from sending the request to the last byte. The upstream's resources/read is timed as P2 times it (the answer read to its end, not decoded: that leaves the decode to the client, in the upstream's favour); the gateway's resources/stream includes the resources/stream call, the downloadUrl GET and everything the gateway does for it (the upstream's whole resources/read, decoded as it arrives). The conversion gateway runs with `--stream-cache=false`, so every run goes to the upstream; the cache gateway (defaults: local store, stream cache on) is filled by one download, warmed by one hit, and each counted hit is a fresh resources/stream answered by a 302 to a /d link of the store (sendfile). nginx sends the same file as the hits: the store's copy, hard-linked into its folder for these rounds, so both servers send the very same page-cache pages; nginx's own copy (the upstream's file) runs in the same rounds as information. Each round runs a hit, nginx on the same file and nginx on its own copy, in rotating order; before it both files are read through the page cache, and each file's residency (mincore) and mean folio size (/proc/kpageflags: sendfile costs both ends per folio piece) are read just before each run; both servers are watched the same way (RSS every 5 ms, CPU time from /proc). RSS growth: the process's peak (VmHWM reset before the run) minus its idle RSS after start and a 4 KiB warm-up.\n\n")
	b.WriteString("| figure | per run | median |\n|---|---|--:|\n")
	row := func(name string, v []float64, unit string) {
		fmt.Fprintf(&b, "| %s | %s | %s %s |\n", name, fmtList(v, "%.0f"), render.Human(measure.Median(v)), unit)
	}
	row("upstream resources/read, MB/s (decoded)", res.upRead, "MB/s")
	row("gateway resources/stream, MB/s", res.conv, "MB/s")
	row("upstream resources/read: first byte (ms)", res.upFirst, "ms")
	row("gateway resources/stream: first byte (ms)", res.convFirst, "ms")
	row("upstream resources/read: MB/s after the first byte", res.upAfter, "MB/s")
	row("gateway resources/stream: MB/s after the first byte", res.convAfter, "MB/s")
	res.cacheRows(row)
	row("gateway RSS growth, conversion (MiB)", mibs(res.convGrowth), "MiB")
	row("cache gateway RSS growth, fill then hits (MiB)", mibs(res.cacheGrowth), "MiB")
	row("upstream RSS growth per resources/read (MiB; it builds the whole answer)", mibs(res.upGrowth), "MiB")
	fmt.Fprintf(&b, "\nThe download that filled the cache ran at %s MB/s; its bytes and those of the first hit have the seeded sha256.\n", render.Human(res.miss))
	return b.String()
}

func mibs(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) / (1 << 20)
	}
	return out
}
