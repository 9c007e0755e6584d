package main

import (
	"context"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/prober"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// monitor samples the server's RSS (/proc/PID/status, every 50 ms) and
// times GET /healthz (every cfg.healthzEvery, from a process of its own:
// package internal/prober) for the whole run, charging
// each sample to the phase running at the time (a table row, a storm, or
// setup).
type monitor struct {
	t         *target
	every     time.Duration
	keepAlive bool // probe on one kept-alive connection

	mu     sync.Mutex
	label  string
	stats  map[string]*phaseStats
	labels []string // in first-seen order
}

// phaseStats is what the monitor saw during one phase.
type phaseStats struct {
	peakRSS    int64
	healthzMax time.Duration
	probes     int
	failed     int // probes that got no 200
	samples    []time.Duration
}

func newMonitor(t *target, c config) *monitor {
	return &monitor{t: t, every: c.healthzEvery, keepAlive: c.probeKeepAlive, stats: map[string]*phaseStats{}}
}

// phase makes later samples count for label; it takes one RSS sample at
// once, so even a phase shorter than the sampling period has one.
func (m *monitor) phase(label string) {
	v := sysinfo.RSS(m.t.pid())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.label = label
	s := m.current()
	s.peakRSS = max(s.peakRSS, v)
}

// get returns a copy of label's stats.
func (m *monitor) get(label string) phaseStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.stats[label]; s != nil {
		return *s
	}
	return phaseStats{}
}

// current is the running phase's stats, created on first use; m.mu is held.
func (m *monitor) current() *phaseStats {
	if m.stats[m.label] == nil {
		m.stats[m.label] = &phaseStats{}
		m.labels = append(m.labels, m.label)
	}
	return m.stats[m.label]
}

// run samples until ctx ends.
func (m *monitor) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { m.sampleRSS(ctx) })
	wg.Go(func() { m.probeHealthz(ctx) })
	wg.Wait()
}

func (m *monitor) sampleRSS(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v := sysinfo.RSS(m.t.pid())
		m.mu.Lock()
		if s := m.current(); v > s.peakRSS {
			s.peakRSS = v
		}
		m.mu.Unlock()
	}
}

// probeHealthz times /healthz from the prober process (package
// internal/prober) until ctx ends; in this process when it cannot start.
func (m *monitor) probeHealthz(ctx context.Context) {
	results, err := prober.Start(ctx, m.t.base()+"/healthz", m.every, m.keepAlive)
	if err != nil {
		logf("the /healthz prober did not start (%v): probing in this process", err)
		prober.Loop(ctx, m.t.base()+"/healthz", m.every, m.keepAlive, m.recordAlive)
		return
	}
	for r := range results {
		if ctx.Err() != nil {
			return
		}
		m.recordAlive(r)
	}
}

// recordAlive records r unless the server is down: a probe of a crashed
// server is not charged (the batch checks report the crash).
func (m *monitor) recordAlive(r prober.Result) {
	if m.t.alive() {
		m.record(r)
	}
}

// record charges one probe to the running phase.
func (m *monitor) record(r prober.Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.current()
	s.probes++
	s.samples = append(s.samples, r.Took)
	s.healthzMax = max(s.healthzMax, r.Took)
	if !r.OK {
		s.failed++
	}
}
