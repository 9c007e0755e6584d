package gw

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// What a gateway cannot do (docs/gateway.md): an upstream that builds its
// whole resources/read answer in memory still does so with a gateway in
// front. Information beside G2, full runs only: the go-sdk upstream
// (bench/peers/gosdk) serving one resources/read of a 2 GiB blob, its RSS
// sampled every 20 ms, stopped once it passes bufferCap (or what the
// machine has free, less a margin) so the run cannot take the machine down.

const (
	bufferSize = 2 << 30
	bufferCap  = 12 << 30 // bytes of RSS at which the upstream is stopped
)

// bufferResult is the 2 GiB read's outcome.
type bufferResult struct {
	ts                    *tsBuffer // the TypeScript SDK v2 upstream, when Node is installed
	limit, baseline, peak int64
	stopped               bool          // the upstream passed limit and was killed
	at                    time.Duration // when it was stopped, or the read's end
	ttfb                  time.Duration // first body byte (0: none came)
	err                   string
}

// runBuffer seeds the 2 GiB file, starts an upstream on it alone and
// reads it once, or until the upstream passes the limit.
func runBuffer(ctx context.Context, cfg *Options, dir string, bins map[string]string) *bufferResult {
	res := &bufferResult{limit: bufferCap, ts: runTSBuffer(ctx, cfg.Repo)}
	if avail := memAvailable(); avail > 0 {
		res.limit = min(res.limit, avail-3<<30)
	}
	files := filepath.Join(dir, "buffer")
	if err := os.MkdirAll(files, 0o755); err != nil {
		res.err = err.Error()
		return res
	}
	defer os.RemoveAll(files)
	measure.Logf("G: an upstream that buffers: go-sdk resources/read of 2 GiB, stopped above %.1f GiB of RSS", float64(res.limit)/(1<<30))
	if _, err := seed.File(filepath.Join(files, "bench-2GiB"), bufferSize); err != nil {
		res.err = err.Error()
		return res
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		res.err = err.Error()
		return res
	}
	p, err := proc.Start("upstream 2 GiB", "http://"+addr+"/readyz", bins["gosdk"], []string{"-dir", files, "--listen", addr})
	if err != nil {
		res.err = err.Error()
		return res
	}
	defer p.Stop()
	res.read(ctx, p, "http://"+addr+"/mcp")
	measure.Logf("  2 GiB: peak RSS %.2f GiB (baseline %.0f MiB), stopped %v at %v, first byte %v, %s", float64(res.peak)/(1<<30), float64(res.baseline)/(1<<20), res.stopped, res.at.Round(time.Millisecond), res.ttfb.Round(time.Millisecond), res.err)
	return res
}

// read sends the resources/read and watches the upstream's RSS meanwhile.
func (res *bufferResult) read(ctx context.Context, p *proc.Proc, endpoint string) {
	c := mcpc.New(endpoint)
	if err := c.Init(ctx, nil); err != nil {
		res.err = err.Error()
		return
	}
	res.baseline = sysinfo.RSS(p.PID())
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var peak atomic.Int64
	var stopped atomic.Bool
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		for {
			rss := sysinfo.RSS(p.PID())
			peak.Store(max(peak.Load(), rss))
			if rss > res.limit && !stopped.Load() {
				stopped.Store(true)
				p.Kill()
				cancel()
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var ttfb time.Duration
	resp, err := c.Post(ctx, "resources/read", map[string]string{"uri": "blob:///bench-2GiB"})
	if err == nil {
		var n int64
		n, ttfb, err = measure.Drain(resp, t0, make([]byte, 256<<10), 4*((bufferSize+2)/3))
		if n == 0 {
			ttfb = 0 // Drain times its wait for the first byte even when none came
		}
	}
	res.at = time.Since(t0)
	close(done)
	res.peak, res.stopped = peak.Load(), stopped.Load()
	if m, e := sysinfo.ReadMem(p.PID()); e == nil && !res.stopped {
		res.peak = max(res.peak, m.HWM)
	}
	if err != nil && !res.stopped {
		res.err = err.Error()
	}
	res.ttfb = ttfb
}

// memAvailable is /proc/meminfo's MemAvailable in bytes (0 when unknown).
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(b)) {
		var kb int64
		if _, err := fmt.Sscanf(l, "MemAvailable: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	return 0
}

// render is the section's paragraph on the 2 GiB read.
func (res *bufferResult) render() string {
	var b strings.Builder
	b.WriteString("### An upstream that buffers: go-sdk, 2 GiB\n\n")
	b.WriteString("Information for docs/gateway.md (\"What a gateway cannot do\"), no verdict: bench/peers/gosdk alone (go-sdk v1.8.0, the resource read whole with os.ReadFile and returned as `Blob`, as an SDK user writes it), one `resources/read` of a 2 GiB file, its RSS sampled every 20 ms, and the process killed once its RSS passes the limit (12 GiB, or the machine's MemAvailable less 3 GiB if lower), so the run cannot take the machine down. A gateway in front of it changes none of this: its downloadUrl runs this same `resources/read`.\n\n")
	gib := func(v int64) string { return fmt.Sprintf("%.2f GiB", float64(v)/(1<<30)) }
	switch {
	case res.err != "":
		fmt.Fprintf(&b, "Failed: %s (peak RSS %s).\n", res.err, gib(res.peak))
	case res.stopped:
		first := "before it had sent a byte"
		if res.ttfb > 0 {
			first = fmt.Sprintf("its first byte sent after %.1f s", res.ttfb.Seconds())
		}
		fmt.Fprintf(&b, "The upstream's RSS passed the %s limit %.1f s after the request (idle %s, %s at the last sample), %s, and was stopped: serving one 2 GiB blob takes it more than %s.\n", gib(res.limit), res.at.Seconds(), gib(res.baseline), gib(res.peak), first, gib(res.limit))
	default:
		fmt.Fprintf(&b, "The upstream served it: peak RSS %s (idle %s, growth %s, %.1f× the blob), first byte after %.1f s, the whole answer after %.1f s.\n", gib(res.peak), gib(res.baseline), gib(res.peak-res.baseline), float64(res.peak-res.baseline)/bufferSize, res.ttfb.Seconds(), res.at.Seconds())
	}
	if res.ts != nil {
		b.WriteString("\n" + res.ts.render())
	}
	return b.String()
}
