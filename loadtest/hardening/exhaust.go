package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/exhaust"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// exhaustClass names the state exhaustion class in the failure list.
const exhaustClass = "state exhaustion"

// attackerBlob is the blob of the attacking principal that single-use
// links point at.
const attackerBlob = "exhaust/blob.txt"

// statePhase is one row of a state pass: a label and what drives it.
// Unless claims is set the phase's server runs with no claims rate, so
// that records of begun sessions do not starve a phase about another
// limit; a phase about claims keeps the rate of the pass's limits.
type statePhase struct {
	label  string
	claims bool
	run    func(ctx context.Context, t *exhaust.Target) *exhaust.Phase
}

// statePass is phases of one principal (mallory) against a fresh mcpblob
// each, on a local store of its own, while a second principal (bob) keeps
// using it; each phase is a row with the usual after-batch checks, the RSS
// limit maxRSS, and (when maxP99 > 0) a bound on the bystander's p99.
type statePass struct {
	name   string
	limits exhaust.Limits
	flags  bool // start the server with the limits' flags
	maxRSS int64
	maxP99 time.Duration
	phases []statePhase
	// done, when set, sees each phase's outcome with its RSS and latencies.
	done func(label string, ph *exhaust.Phase, peakRSS int64, lat exhaust.Latencies)
}

// driveState runs the state exhaustion class, then (full profile) the
// state storm, each on a fresh server.
func driveState(ctx context.Context, c config, bin, work string, sec *secrets, feats features, rep *report) error {
	if c.runs(exhaustClass) && ctx.Err() == nil {
		if err := runStatePass(ctx, c, bin, work, sec, feats, rep, exhaustionPass(c)); err != nil {
			return err
		}
	}
	if c.stormSessions > 0 && c.runs("state storm") && ctx.Err() == nil {
		return runStatePass(ctx, c, bin, work, sec, feats, rep, stormPass(c, rep))
	}
	return nil
}

// exhaustionPass is the class: every phase at ten times the limits.
func exhaustionPass(c config) statePass {
	caps := func(ctx context.Context, t *exhaust.Target) *exhaust.Phase {
		return exhaust.Capabilities(ctx, t, c.capInits)
	}
	return statePass{name: "limits", limits: c.exhaustLimits, flags: c.exhaustFlags, maxRSS: c.exhaustRSS, phases: []statePhase{
		{"one principal: sessions", false, exhaust.Sessions},
		{"one principal: capabilities", false, caps},
		{"one principal: resources/subscribe", false, exhaust.Subscribe},
		{"one principal: subscriptions/listen", false, exhaust.Listen},
		{"one principal: streams", false, exhaust.Streams},
		{"one principal: pending rounds", false, exhaust.Pending},
		{"one principal: claims", true, exhaust.Claims},
	}}
}

// runStatePass runs p's phases, each on a fresh server of its own (so no
// phase inherits another's state, RSS or claims window).
func runStatePass(ctx context.Context, c config, bin, work string, sec *secrets, feats features, rep *report, p statePass) error {
	how := "the default limits"
	if p.flags {
		how = "the limits given as flags"
	}
	rep.setup = append(rep.setup, fmt.Sprintf("%s: a fresh mcpblob per phase (its own port, admin listener and local store in %s), %s (%s), "+
		"the claims rate lifted (--max-claims-per-minute 0) but in the phases about claims; one principal (mallory: a blobs:read key, "+
		"and a blobs:write key for request_upload) against a second (bob); logs %s",
		p.name, filepath.Join(work, p.name+"-N-data"), how, p.limits, filepath.Join(work, p.name+"-N.log")))
	for i, ph := range p.phases {
		if ctx.Err() != nil {
			return nil
		}
		if err := runStatePhase(ctx, c, bin, work, sec, feats, rep, p, i, ph); err != nil {
			return err
		}
	}
	return nil
}

// runStatePhase starts a server for phase i, runs it with the monitor and
// the bystander, and stops the server.
func runStatePhase(ctx context.Context, c config, bin, work string, sec *secrets, feats features, rep *report, p statePass, i int, ph statePhase) error {
	r, xt, err := startStateTarget(ctx, c, bin, work, sec, feats, rep, p, i, ph)
	if err != nil {
		return err
	}
	mctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.mon.run(mctx) })
	by := &exhaust.Bystander{Addr: r.t.addr, Key: sec.apiKeys["bob"], URI: "blob:///" + hostile.BaseText, Clients: 2, Pause: 20 * time.Millisecond}
	by.Phase(r.t.name + " setup")
	wg.Go(func() { by.Run(mctx) })
	err = r.runPhase(ctx, xt, by, p, ph)
	stop()
	wg.Wait()
	r.t.stop()
	r.shutdownLogs()
	rep.absorb(r.mon)
	return err
}

// startStateTarget starts a fresh server for phase i of p and stores the
// baseline objects and the attacker's blob.
func startStateTarget(ctx context.Context, c config, bin, work string, sec *secrets, feats features, rep *report, p statePass, i int, ph statePhase) (*runner, *exhaust.Target, error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, nil, err
	}
	admin, err := proc.FreeAddr()
	if err != nil {
		return nil, nil, err
	}
	data := filepath.Join(work, fmt.Sprintf("%s-%d-data", p.name, i))
	args := append(serveArgs(addr, sec), "--data", data, "--admin-listen", admin)
	if p.flags {
		args = append(args, p.limits.Flags()...)
	}
	if !ph.claims {
		args = append(args, "--max-claims-per-minute", "0") // the last flag given wins
	}
	t := &target{name: p.name, bin: bin, addr: addr, logPath: filepath.Join(work, fmt.Sprintf("%s-%d.log", p.name, i)), args: args}
	if err := t.start(); err != nil {
		return nil, nil, err
	}
	inv := newInventory(feats.tenancy)
	e := hostile.NewEnv(hostile.Options{Name: t.name, Addr: addr, APIKeys: sec.apiKeys, Keyring: sec.keyring, Tenancy: feats.tenancy,
		Flips: c.flips, CaseLimit: c.caseLimit, Seed: c.seed}, sec, inv)
	r := &runner{e: e, t: t, cfg: c, sec: sec, inv: inv, rules: wire.NewRules(work, c.repo), rep: rep, mon: newMonitor(t, c), logs: &logTail{path: t.logPath}}
	r.mon.phase(t.name + " setup")
	err = r.seedStore(ctx)
	if err == nil {
		err = r.putBaseline(ctx, attackerWriter, attackerBlob, "text/plain", []byte("one principal's blob\n"))
	}
	if err != nil {
		t.stop()
		return nil, nil, err
	}
	xt := &exhaust.Target{Addr: addr, Attacker: sec.apiKeys[attacker], Writer: sec.apiKeys[attackerWriter], Limits: p.limits,
		Workers: 8, Hold: c.exhaustHold, Secret: sec.AddToken, Blob: attackerBlob, ClaimCount: func() int { return countClaims(data) }, Admin: admin}
	return r, xt, nil
}

// runPhase runs one phase as a row and checks what it left.
func (r *runner) runPhase(ctx context.Context, xt *exhaust.Target, by *exhaust.Bystander, p statePass, ph statePhase) error {
	row := r.rep.row(r.t.name, ph.label)
	row.maxRSS = p.maxRSS
	r.mon.phase(row.key())
	by.Phase(row.key())
	start := time.Now()
	out := ph.run(ctx, xt)
	out.Elapsed = time.Since(start)
	time.Sleep(300 * time.Millisecond) // the bystander's requests after the phase still count for it
	lat := by.Get(row.key())
	r.tallyPhase(row, out, lat, p.maxP99)
	if p.done != nil {
		p.done(ph.label, out, r.mon.get(row.key()).peakRSS, lat)
	}
	return r.afterBatch(ctx, row, exhaustClass)
}

// tallyPhase puts a phase's outcome on its row and its findings in the
// report: problems, broken bounds, the bystander's failures and p99.
func (r *runner) tallyPhase(row *row, out *exhaust.Phase, lat exhaust.Latencies, maxP99 time.Duration) {
	row.inputs += out.Sent
	row.clear += out.Refused
	row.accepted += out.Accepted
	row.unclear += out.Unclear
	row.server += out.ServerErrors
	fail := func(input, problem string) { r.rep.fail(row.key(), exhaustClass, input, problem) }
	for _, p := range out.Problems() {
		fail(p.Input, p.String())
	}
	var bounds []string
	for _, b := range out.Bounds {
		bounds = append(bounds, fmt.Sprintf("%s %d (limit %d)", b.What, b.Held, b.Limit))
		if b.Broken() {
			row.wrong += overCount(b, out.Accepted)
			fail("(bound)", fmt.Sprintf("%s: %d, over the limit of %d", b.What, b.Held, b.Limit))
		}
	}
	if lat.Failed > 0 {
		row.unclear += lat.Failed
		fail("(second principal)", fmt.Sprintf("%d of %d of bob's requests failed during the phase; the first: %s", lat.Failed, len(lat.Samples), lat.FirstFailure))
	}
	if p99 := lat.Quantile(0.99); maxP99 > 0 && p99 >= maxP99 {
		fail("(second principal)", fmt.Sprintf("bob's p99 latency %s ≥ %s", p99.Round(100*time.Microsecond), maxP99))
	}
	r.rep.note("%s: %s in %.1fs; %s; kept: %s; second principal (bob): %s; RSS %s at the end", row.key(), out.Name, out.Elapsed.Seconds(),
		strings.Join(out.Notes, "; "), strings.Join(bounds, ", "), lat, mib(sysinfo.RSS(r.t.pid())))
}

// overCount is what a broken bound adds to the row's wrong answers: the
// items kept over the limit (each a success that had to be a refusal), or
// one for a bound of bytes.
func overCount(b exhaust.Bound, accepted int) int {
	if b.Bytes {
		return 1
	}
	return int(min(b.Held-b.Limit, int64(max(accepted, 1))))
}

// countClaims counts the files under the local store's claims folder
// (-1 when it cannot be read).
func countClaims(data string) int {
	n := 0
	err := filepath.WalkDir(filepath.Join(data, ".mcpblob", "claims"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return -1
	}
	return n
}
