package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostilefiles"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostiletus"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// runner drives one target: it sends the batches (built on env) and
// checks after each, with the process, the secrets, the inventory of the
// store and the judging rules on this side.
type runner struct {
	e     *hostile.Env
	t     *target
	cfg   config
	sec   *secrets
	inv   *inventory
	rules wire.Rules
	rep   *report
	mon   *monitor
	logs  *logTail
	// keep, when set, picks the batches sent (the gateway pass: /mcp only).
	keep func(hostile.Batch) bool
	// pass prefixes the class names -only matches ("gateway hostile
	// clients: " in the gateway pass, so -only gateway runs all of it).
	pass string
	// refusedLater, when set, judges an accepted input that must be
	// refused: "" when the refusal came later (the gateway pass: its
	// downloadUrl's GET), else what is wrong.
	refusedLater func(ctx context.Context, a *wire.Answer) string
}

// classes is every class, in the order they run: hostile's, then the tus
// and files/* classes of their own packages.
var classes = append(hostile.Classes[:len(hostile.Classes):len(hostile.Classes)],
	hostile.Class{Name: hostiletus.Name, Gen: hostiletus.Abuse}, hostile.Class{Name: hostilefiles.Name, Gen: hostilefiles.Abuse})

// runClasses generates and sends every class's batches, stopping early
// only when the budget runs out or the server cannot be brought back.
func (r *runner) runClasses(ctx context.Context) error {
	for _, cl := range classes {
		if ctx.Err() != nil {
			return nil
		}
		if !r.cfg.runs(r.pass + cl.Name) {
			continue
		}
		r.mon.phase(r.t.name + " setup")
		batches := cl.Gen(ctx, r.e)
		for _, b := range batches {
			if ctx.Err() != nil {
				return nil
			}
			if r.keep != nil && !r.keep(b) {
				continue
			}
			if err := r.runBatch(ctx, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// runBatch sends b's inputs (a few at a time), tallies them on the row of
// b's surface and runs the after-batch checks.
func (r *runner) runBatch(ctx context.Context, b hostile.Batch) error {
	row := r.rep.row(r.t.name, b.Surface.Name)
	r.mon.phase(row.key())
	answers := make([]*wire.Answer, len(b.Cases))
	sem := make(chan struct{}, r.cfg.workers)
	var wg sync.WaitGroup
	for i, c := range b.Cases {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, r.cfg.caseLimit)
			defer cancel()
			answers[i] = c.Send(cctx, r.e)
		})
	}
	wg.Wait()
	for i, c := range b.Cases {
		r.tally(ctx, row, b, c, answers[i])
	}
	return r.afterBatch(ctx, row, b.Class)
}

// tally judges one answer and records it.
func (r *runner) tally(ctx context.Context, row *row, b hostile.Batch, c hostile.Case, a *wire.Answer) {
	v, why := r.rules.Judge(b.Surface.Shape, c.WellFormed, a)
	r.e.NotePresigned(a)
	row.inputs++
	fail := func(problem string) { r.rep.fail(row.key(), b.Class, c.Name, problem) }
	switch v {
	case wire.Accepted:
		row.accepted++
		if c.Stores {
			r.inv.NoteStored(c.As, a)
		}
	case wire.Clear:
		row.clear++
	case wire.Unclear:
		row.unclear++
		fail("unclear: " + why)
	case wire.ServerError:
		row.server++
		fail("server error: " + why)
	}
	wrong := ""
	switch {
	case c.Want == hostile.WantReject && v == wire.Accepted && r.refusedLater != nil:
		wrong = r.refusedLater(ctx, a)
	case c.Want == hostile.WantReject && v == wire.Accepted:
		wrong = "accepted; it must be refused: " + a.String()
	case c.Want == hostile.WantAccept && v == wire.Clear:
		wrong = "refused; it must succeed: " + a.String()
	case c.Check != nil && (v == wire.Accepted || v == wire.Clear || (c.CheckAlways && a.Status != 0)):
		wrong = c.Check(ctx, r.e, a)
	}
	if wrong != "" {
		row.wrong++
		fail("wrong answer: " + wrong)
	}
}

// afterBatch checks that the process is alive, that the store holds what
// it should, that the server still answers normal requests, and that the
// batch's log lines hold no panic and no secret. A dead process is
// restarted (same store, keys and port) and lost baseline objects are
// stored again, so the remaining inputs still run and one finding does
// not repeat in every later batch.
func (r *runner) afterBatch(ctx context.Context, row *row, class string) error {
	fail := func(input, problem string) { r.rep.fail(row.key(), class, input, problem) }
	if !r.t.alive() {
		row.crashes++
		fail("(process)", "crash: mcpblob exited: "+r.t.exitState())
		if err := r.restart(); err != nil {
			return err
		}
	}
	st := r.checkStore(ctx)
	if st.err != nil {
		fail("(store check)", st.err.Error())
	}
	for _, l := range st.lost {
		row.lost++
		fail("(store)", "lost: "+l)
	}
	for _, h := range st.half {
		row.half++
		fail("(store)", "half-written or unexpected: "+h)
	}
	if len(st.lost) > 0 {
		// Put lost baseline objects back, so later inputs have them.
		if err := r.seedStore(ctx); err != nil {
			fail("(store)", "restoring the baseline: "+err.Error())
		}
	}
	if why := r.healthy(ctx); why != "" {
		row.crashes++
		fail("(normal request)", "hang: the server stopped serving: "+why)
	}
	seg := r.logs.next()
	for _, p := range panics(seg) {
		row.crashes++
		fail("(log)", "panic in the log: "+p)
	}
	for _, h := range r.sec.scan(seg) {
		row.secrets++
		fail("(log)", "secret in the log ("+h.kind+"): "+h.line)
	}
	return nil
}

// restart brings a crashed server back on the same port, store and keys.
func (r *runner) restart() error {
	r.e.ForgetSessions()
	if err := r.t.start(); err != nil {
		return fmt.Errorf("restarting mcpblob after a crash: %w", err)
	}
	time.Sleep(100 * time.Millisecond)
	return nil
}
