package main

import (
	"context"

	"github.com/mcpblob/mcpblob/bench/compare/gw"
	"github.com/mcpblob/mcpblob/loadtest/rig/mdsection"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// The gateway targets G1–G3 live in package gw; this hands them the
// harness's flags, binaries and P6's machinery, and writes their section.

// runG measures G1–G3 into rep.g.
func runG(ctx context.Context, cfg *config, work string, bins map[string]string, rep *report) {
	rep.g = gw.Run(ctx, gwOptions(cfg, bins), work)
}

func gwOptions(cfg *config, bins map[string]string) *gw.Options {
	return &gw.Options{
		Quick: cfg.quick, Repo: cfg.repo, Bins: bins,
		ServerCPU: p6ServerCPU, LoadCPU: p6LoadCPU, P99: p6P99,
		Missing:     func() string { return p6Missing(sysinfo.Cores()) },
		StartPinned: startPinned,
		StartNginx:  func(prefix, dir, addr string) (*proc.Proc, error) { return startNginx(prefix, dir, addr) },
		Trial: func(ctx context.Context, name, base string, p *proc.Proc, rate, seconds int, tag string) (gw.Trial, error) {
			st, err := p6Trial(ctx, cfg, &system{name: name, base: base, proc: p}, rate, seconds, tag)
			return gw.Trial{CPU: st.cpu, P99: st.p99, Count: st.count, Failed: st.failed, OK: st.ok, Why: st.why}, err
		},
	}
}

// writeG renews the gateway section of cfg.out alone (-only G) and its charts.
func writeG(cfg *config, rep *report) error {
	if err := mdsection.Rewrite(cfg.out, "gateway", rep.g.Render(rep.commit)); err != nil {
		return err
	}
	return rep.g.WriteCharts(cfg.charts)
}

// writeTus renews the tus section of cfg.out alone (-only P11) and its charts.
func writeTus(cfg *config, rep *report) error {
	if err := mdsection.Rewrite(cfg.out, "tus", rep.tus.Render(rep.commit)); err != nil {
		return err
	}
	return rep.tus.WriteCharts(cfg.charts)
}
