package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/exhaust"
	"github.com/mcpblob/mcpblob/loadtest/rig/mdsection"
)

// stormHold is how long the state storm holds its streams open.
const stormHold = 10 * time.Second

// stormPass is the state storm on a fresh server with the default limits: one
// principal opens c.stormSessions sessions and c.stormStreams streams and
// holds them, while the second principal's p99 is measured; its figures are
// noted, and written to -results.
func stormPass(c config, rep *report) statePass {
	label := fmt.Sprintf("state storm: %d sessions, %d streams", c.stormSessions, c.stormStreams)
	storm := func(ctx context.Context, t *exhaust.Target) *exhaust.Phase {
		t.Hold = stormHold
		return exhaust.Storm(ctx, t, c.stormSessions, c.stormStreams)
	}
	return statePass{name: "storm", limits: exhaust.Defaults, maxRSS: c.exhaustRSS, maxP99: c.maxP99,
		phases: []statePhase{{label, true, storm}},
		done: func(_ string, ph *exhaust.Phase, peak int64, lat exhaust.Latencies) {
			rep.note("state storm (%d sessions, %d streams from one principal, held %s): peak RSS %s (limit %s); second principal: %s (p99 limit %s); the storm's requests: %d accepted, %d refused clearly, %d unclear, %d 5xx",
				c.stormSessions, c.stormStreams, stormHold, mib(peak), mib(c.exhaustRSS), lat, c.maxP99, ph.Accepted, ph.Refused, ph.Unclear, ph.ServerErrors)
			if c.results == "" {
				return
			}
			if err := writeStormResults(c, stormRow(c, ph, peak, lat)); err != nil {
				rep.fail("storm", "results", c.results, err.Error())
			}
		}}
}

// stormRow is the storm's row of the RESULTS.md table.
func stormRow(c config, ph *exhaust.Phase, peak int64, lat exhaust.Latencies) string {
	var missed []string
	if peak >= c.exhaustRSS {
		missed = append(missed, fmt.Sprintf("RSS %s ≥ %s", mib(peak), mib(c.exhaustRSS)))
	}
	if p99 := lat.Quantile(0.99); p99 >= c.maxP99 || lat.Failed > 0 || len(lat.Samples) == 0 {
		missed = append(missed, fmt.Sprintf("p99 %s, %d failed", p99.Round(100*time.Microsecond), lat.Failed))
	}
	verdict := "met"
	if len(missed) > 0 {
		verdict = "**missed**: " + strings.Join(missed, "; ")
	}
	var held []string
	for _, b := range ph.Bounds {
		held = append(held, fmt.Sprintf("%d / %d", b.Held, b.Limit))
	}
	r := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("| %s | %s | %s | %d / %d | %s | %s | %d | %s | %s | %s | %d / %d / %d / %d | %s |",
		resultsLabel(c), time.Now().UTC().Format("2006-01-02 15:04"), loadAverage(), c.stormSessions, c.stormStreams, strings.Join(held, "; "), mib(peak),
		len(lat.Samples), r(lat.Quantile(0.5)), r(lat.Quantile(0.99)), r(lat.Quantile(1)),
		ph.Accepted, ph.Refused, ph.Unclear, ph.ServerErrors, verdict)
}

// loadAverage is the machine's load average over the last minute, as
// /proc/loadavg gives it: other work on the CPUs shows in the latencies.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// resultsLabel names the build measured: -results-label, else the
// repository's commit (with "+" when its tree has changes).
func resultsLabel(c config) string {
	if c.resultsLabel != "" {
		return c.resultsLabel
	}
	out, err := exec.Command("git", "-C", c.repo, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "(unknown commit)"
	}
	label := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", c.repo, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		label += "+"
	}
	return label
}

const stormHeader = "| build | date (UTC) | load (1 min, this machine) | sessions / streams sent | sessions held (peak) / limit; streams open / limit | peak RSS | second principal's requests | p50 | p99 | max | storm answers: accepted / refused / unclear / 5xx | target (RSS, p99) |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|\n"

// writeStormResults writes row into the section "statestorm" of
// c.results, replacing the row of the same build and keeping the others.
func writeStormResults(c config, row string) error {
	old, err := os.ReadFile(c.results)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	body, _ := mdsection.Extract(string(old), "statestorm")
	label := "| " + resultsLabel(c) + " |"
	var rows []string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| build |") && !strings.HasPrefix(line, label) {
			rows = append(rows, strings.TrimRight(line, "\n"))
		}
	}
	rows = append(rows, row)
	var b strings.Builder
	b.WriteString("## State storm: 2,000 sessions and 200 streams from one principal\n\n")
	b.WriteString("Written by `make hardening HARDENING_FLAGS='-results ../bench/RESULTS.md'` (loadtest/hardening, full profile; `-results-label` names the row): " +
		"on a fresh mcpblob with the default limits, one principal (a blobs:read key) opens 2,000 2025-11-25 sessions, then 200 notification streams " +
		"(half GET streams, half subscriptions/listen) held " + stormHold.String() + ", while a second principal sends 2026-07-28 tools/list and resources/read of a " +
		"1,000-byte blob (2 clients, 20 ms apart, kept-alive). Target: peak RSS < 256 MiB and the second principal's p99 < 50 ms. " +
		"One row per build; a new run of the same build replaces its row.\n\n")
	b.WriteString(stormHeader)
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	return mdsection.Rewrite(c.results, "statestorm", b.String())
}
