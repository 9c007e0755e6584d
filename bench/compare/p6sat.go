package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// P6 at saturation: wrk (Debian's, C, one event loop: the lightest load
// generator there is) on its own CPU keeps 16 requests in flight against one
// server on the other CPU, so a row's req/s is what one core of that server
// answers. The rows take turns in rounds (each round starting one row further
// along), so machine noise falls on all alike; a figure is the median round.

//go:embed wrk/p6.lua
var p6Lua []byte

const (
	p6Conns        = 16
	p6Rounds       = 3
	p6Seconds      = 8
	p6QuickRounds  = 2
	p6QuickSeconds = 3
	p6WarmSeconds  = 1 // one unrecorded run per row before the first round
	p6Timeout      = "2s"
	p6Modern       = "2026-07-28"
)

// The saturation rows.
const (
	p6RowRead   = "mcpblob resources/read"
	p6RowList   = "mcpblob tools/list"
	p6RowKey    = "mcpblob resources/read, API key"
	p6RowOAuth  = "mcpblob resources/read, OAuth"
	p6RowModern = "mcpblob resources/read, 2026-07-28"
	p6RowTraced = "mcpblob resources/read, tracing on"
	p6RowGoSDK  = "go-sdk resources/read"
	p6RowFloor  = "fasthttp floor GET"
	p6RowNginx  = "nginx GET"
)

// p6RowText is each row's server and request, for the table.
var p6RowText = map[string][2]string{
	p6RowRead:   {"**mcpblob**", "`resources/read` of the 4 KiB blob (2025-11-25 session)"},
	p6RowList:   {"**mcpblob**", "`tools/list` (2025-11-25 session)"},
	p6RowKey:    {"**mcpblob** `--auth-keys`", "`resources/read`, 4 KiB, `Authorization: Bearer` API key (session)"},
	p6RowOAuth:  {"**mcpblob** `--oauth-issuer`", "`resources/read`, 4 KiB, `Authorization: Bearer` OAuth access token (a JWT from the test AS, cmd/mcpblob-testas; session)"},
	p6RowModern: {"**mcpblob**", "`resources/read`, 4 KiB, 2026-07-28 (no session; `Mcp-Method`, `Mcp-Name`, `_meta`)"},
	p6RowTraced: {"**mcpblob** `OTEL_*` on", "`resources/read` of the 4 KiB blob (2025-11-25 session), every request traced (`always_on`) and exported over OTLP/HTTP"},
	p6RowGoSDK:  {"go-sdk (bench/peers/gosdk)", "`resources/read`, 4 KiB (2025-11-25 session)"},
	p6RowFloor:  {"fasthttp floor (bench/peers/fasthttpfile)", "GET of the same file"},
	p6RowNginx:  {"nginx, one worker, sendfile", "GET of the same file"},
}

// p6Row is one server and request under wrk; runs[i] is round i.
type p6Row struct {
	name   string
	system *system
	url    string
	args   []string // the Lua script's arguments (wrk/p6.lua)
	runs   []wrkRun
	errs   []string
}

// wrkRun is one wrk run's figures.
type wrkRun struct {
	requests    int64
	seconds     float64
	rps         float64
	p50, p99    float64 // ms
	max         float64 // ms
	non200      int64   // answers with another status
	rpcErrors   int64   // 200 answers without a JSON-RPC result
	sockErrors  int64   // connect, read, write errors and timeouts
	sockDetail  string  // "connect N, read N, write N, timeout N"
	serverCores float64 // the server's CPU time ÷ the run's time
	serverUS    float64 // the server's CPU µs per request
	coreBusy    float64 // share of the run the server's CPU was busy, anyone's work
	coreIRQ     float64 // of which interrupts (the kernel's TCP receive work, charged to no process)
	wrkCores    float64 // wrk's CPU time ÷ the run's time
	firstBad    string  // the first bad answer's status and body head
}

// valid says whether every request got a 200 answer with a result.
func (w wrkRun) valid() bool {
	return w.requests > 0 && w.non200 == 0 && w.rpcErrors == 0 && w.sockErrors == 0
}

// p6Saturation is P6's saturation measurement.
type p6Saturation struct {
	rounds, seconds int
	rows            []*p6Row
	skipped         []string
	steal           float64 // % of CPU time stolen by the hypervisor during the rounds
}

// p6Saturate runs every row of g under wrk in interleaved rounds.
func p6Saturate(ctx context.Context, cfg *config, g *p6Rig) *p6Saturation {
	s := &p6Saturation{rounds: p6Rounds, seconds: p6Seconds, rows: g.rows, skipped: g.skipped}
	if cfg.quick {
		s.rounds, s.seconds = p6QuickRounds, p6QuickSeconds
	}
	script := filepath.Join(g.dir, "p6.lua")
	if err := os.WriteFile(script, p6Lua, 0o644); err != nil {
		s.skipped = append(s.skipped, "every row: "+err.Error())
		return s
	}
	measure.Logf("P6 at saturation: %d rows, %d rounds of %d s; servers on CPU %s, wrk -t1 -c%d on CPU %s", len(s.rows), s.rounds, s.seconds, p6ServerCPU, p6Conns, p6LoadCPU)
	for _, row := range s.rows {
		if _, err := runWrk(ctx, script, row, p6WarmSeconds); err != nil {
			row.errs = append(row.errs, "warm-up: "+err.Error())
		}
	}
	cpu0 := sysinfo.ReadCPUTimes()
	for r := range s.rounds {
		for i := range s.rows {
			row := s.rows[(i+r)%len(s.rows)]
			if ctx.Err() != nil {
				return s
			}
			w, err := runWrk(ctx, script, row, s.seconds)
			if err != nil {
				row.errs = append(row.errs, fmt.Sprintf("round %d: %s", r+1, err))
			}
			row.runs = append(row.runs, w)
			measure.Logf("  P6 %s round %d: %.0f req/s, p99 %.2f ms, CPU %s busy %.2f (server %.2f, %.1f µs/request; interrupts %.2f), wrk %.2f cores, not 200 %d, JSON-RPC errors %d, socket errors %d",
				row.name, r+1, w.rps, w.p99, p6ServerCPU, w.coreBusy, w.serverCores, w.serverUS, w.coreIRQ, w.wrkCores, w.non200, w.rpcErrors, w.sockErrors)
		}
	}
	s.steal = sysinfo.StealSince(cpu0)
	return s
}

// runWrk runs wrk pinned to the load CPU against row for seconds and reads
// the server's CPU time around it.
func runWrk(ctx context.Context, script string, row *p6Row, seconds int) (wrkRun, error) {
	args := []string{"-c", p6LoadCPU, "wrk", "-t1", fmt.Sprintf("-c%d", p6Conns), fmt.Sprintf("-d%ds", seconds),
		"--timeout", p6Timeout, "-s", script, row.url, "--"}
	cmd := exec.CommandContext(ctx, "taskset", append(args, row.args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	pid := row.system.pid()
	cpu0, cerr0 := sysinfo.ProcCPU(pid)
	core0 := sysinfo.ReadCoreTimes(p6ServerCore)
	err := cmd.Run()
	cpu1, cerr1 := sysinfo.ProcCPU(pid)
	core1 := sysinfo.ReadCoreTimes(p6ServerCore)
	if err != nil {
		return wrkRun{}, fmt.Errorf("wrk: %v: %s", err, render.Trunc(errOut.String()+out.String(), 200))
	}
	w, err := parseWrk(out.String())
	if err != nil {
		return w, err
	}
	w.rps = float64(w.requests) / w.seconds
	w.wrkCores = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds() / w.seconds
	if ticks := core1.Total() - core0.Total(); ticks > 0 {
		w.coreBusy = float64(core1.Busy-core0.Busy) / float64(ticks)
		w.coreIRQ = float64(core1.IRQ-core0.IRQ) / float64(ticks)
	}
	if cerr0 == nil && cerr1 == nil && w.requests > 0 {
		w.serverCores = (cpu1 - cpu0).Seconds() / w.seconds
		w.serverUS = float64(cpu1-cpu0) / float64(time.Microsecond) / float64(w.requests)
	}
	return w, nil
}

// parseWrk reads the lines wrk/p6.lua's done() prints:
// "p6wrk requests=N duration_us=N p50_us=N … timeout=N" and, after a bad
// answer, "p6wrk-first-bad STATUS BODY".
func parseWrk(out string) (wrkRun, error) {
	var line, firstBad string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "p6wrk ") {
			line = l
		}
		if b, ok := strings.CutPrefix(l, "p6wrk-first-bad "); ok {
			firstBad = strings.TrimSpace(b)
		}
	}
	if line == "" {
		return wrkRun{}, fmt.Errorf("wrk printed no p6wrk line: %s", render.Trunc(out, 200))
	}
	f := map[string]int64{}
	for _, kv := range strings.Fields(line)[1:] {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			return wrkRun{}, fmt.Errorf("wrk: bad field %q in %q", kv, strings.TrimSpace(line))
		}
		f[k] = n
	}
	for _, k := range []string{"requests", "duration_us", "p50_us", "p99_us", "max_us", "non200", "rpc_errors", "connect", "read", "write", "timeout"} {
		if _, ok := f[k]; !ok {
			return wrkRun{}, fmt.Errorf("wrk: no %s in %q", k, strings.TrimSpace(line))
		}
	}
	if f["duration_us"] <= 0 {
		return wrkRun{}, fmt.Errorf("wrk: duration %d µs", f["duration_us"])
	}
	return wrkRun{
		requests: f["requests"], seconds: float64(f["duration_us"]) / 1e6,
		p50: float64(f["p50_us"]) / 1e3, p99: float64(f["p99_us"]) / 1e3, max: float64(f["max_us"]) / 1e3,
		non200: f["non200"], rpcErrors: f["rpc_errors"],
		sockErrors: f["connect"] + f["read"] + f["write"] + f["timeout"], firstBad: firstBad,
		sockDetail: fmt.Sprintf("connect %d, read %d, write %d, timeout %d", f["connect"], f["read"], f["write"], f["timeout"]),
	}, nil
}

// wrkVersion is wrk's version as `wrk -v` prints it ("not installed" without it).
func wrkVersion() string {
	out, _ := exec.Command("wrk", "-v").CombinedOutput() // exits 1 after printing its usage
	if f := strings.Fields(string(out)); len(f) > 1 && f[0] == "wrk" {
		return f[1]
	}
	return "not installed"
}

// row is the row named name (nil when it did not run).
func (s *p6Saturation) row(name string) *p6Row {
	for _, r := range s.rows {
		if r.name == name {
			return r
		}
	}
	return nil
}

// rps is the row's req/s by round, 0 for a round that was not valid.
func (s *p6Saturation) rps(name string) []float64 {
	r := s.row(name)
	if r == nil {
		return nil
	}
	out := make([]float64, len(r.runs))
	for i, w := range r.runs {
		if w.valid() {
			out[i] = w.rps
		}
	}
	return out
}

// stat is the median of a figure over the row's valid rounds.
func (s *p6Saturation) stat(name string, fig func(wrkRun) float64) float64 {
	r := s.row(name)
	if r == nil {
		return 0
	}
	var v []float64
	for _, w := range r.runs {
		if w.valid() {
			v = append(v, fig(w))
		}
	}
	return measure.Median(v)
}
