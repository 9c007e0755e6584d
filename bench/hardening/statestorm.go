package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpblob/mcpblob/bench/hardening/internal/exhaust"
	"github.com/mcpblob/mcpblob/bench/internal/mdsection"
)

// stormPass is issue 23's storm on a fresh server with the default
// limits: one principal opens c.stormSessions sessions and c.stormStreams
// streams and holds them, while the second principal's p99 is measured;
// its figures are noted, and written to -results.
func stormPass(c config, rep *report) statePass {
	label := fmt.Sprintf("state storm: %d sessions, %d streams", c.stormSessions, c.stormStreams)
	storm := func(ctx context.Context, t *exhaust.Target) *exhaust.Phase {
		t.Hold = 10 * time.Second
		return exhaust.Storm(ctx, t, c.stormSessions, c.stormStreams)
	}
	return statePass{name: "storm", limits: exhaust.Defaults, maxRSS: c.exhaustRSS, maxP99: c.maxP99,
		phases: []statePhase{{label, storm}},
		done: func(_ string, ph *exhaust.Phase, peak int64, lat exhaust.Latencies) {
			figures := stormFigures(c, ph, peak, lat)
			rep.note("%s", figures)
			if c.results != "" {
				if err := mdsection.Rewrite(c.results, "statestorm", stormSection(figures)); err != nil {
					rep.fail("storm", "results", c.results, err.Error())
				}
			}
		}}
}

// stormFigures is the storm's outcome in one line.
func stormFigures(c config, ph *exhaust.Phase, peak int64, lat exhaust.Latencies) string {
	return fmt.Sprintf("state storm (%d sessions, %d streams from one principal, held 10 s): peak RSS %s (limit %s); second principal: %s (p99 limit %s); the storm's requests: %d accepted, %d refused clearly, %d unclear, %d 5xx",
		c.stormSessions, c.stormStreams, mib(peak), mib(c.exhaustRSS), lat, c.maxP99, ph.Accepted, ph.Refused, ph.Unclear, ph.ServerErrors)
}

// stormSection is the RESULTS.md section of the storm's figures.
func stormSection(figures string) string {
	return fmt.Sprintf("## State storm: 2,000 sessions and 200 streams from one principal\n\n"+
		"Written by `make hardening HARDENING_FLAGS='-results RESULTS.md'` (bench/hardening, the full profile); "+
		"target (issue 23): the node stays under 256 MiB RSS and serves other principals at p99 < 50 ms.\n\n"+
		"- %s\n- date: %s\n", figures, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}
