package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// runner sends the batches of one target and checks after each.
type runner struct {
	e    *env
	rep  *report
	mon  *monitor
	logs *logTail
}

// runClasses generates and sends every class's batches, stopping early
// only when the budget runs out or the server cannot be brought back.
func (r *runner) runClasses(ctx context.Context) error {
	for _, cl := range classes {
		if ctx.Err() != nil {
			return nil
		}
		r.mon.phase(r.e.t.name + " setup")
		batches := cl.gen(ctx, r.e)
		for _, b := range batches {
			if ctx.Err() != nil {
				return nil
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
func (r *runner) runBatch(ctx context.Context, b batch) error {
	row := r.rep.row(r.e.t.name, b.surface.name)
	r.mon.phase(row.key())
	answers := make([]*answer, len(b.cases))
	sem := make(chan struct{}, r.e.cfg.workers)
	var wg sync.WaitGroup
	for i, c := range b.cases {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, r.e.cfg.caseLimit)
			defer cancel()
			answers[i] = c.send(cctx, r.e)
		})
	}
	wg.Wait()
	for i, c := range b.cases {
		r.tally(ctx, row, b, c, answers[i])
	}
	return r.afterBatch(ctx, row, b.class)
}

// tally judges one answer and records it.
func (r *runner) tally(ctx context.Context, row *row, b batch, c hcase, a *answer) {
	v, why := r.e.rules.judge(b.surface.shape, c.wellFormed, a)
	r.e.notePresigned(a)
	row.inputs++
	fail := func(problem string) { r.rep.fail(row.key(), b.class, c.name, problem) }
	switch v {
	case vAccepted:
		row.accepted++
		if c.stores {
			r.e.inv.noteStored(c.as, a)
		}
	case vClear:
		row.clear++
	case vUnclear:
		row.unclear++
		fail("unclear: " + why)
	case vServer:
		row.server++
		fail("server error: " + why)
	}
	wrong := ""
	switch {
	case c.want == wantReject && v == vAccepted:
		wrong = "accepted; it must be refused: " + a.String()
	case c.want == wantAccept && v == vClear:
		wrong = "refused; it must succeed: " + a.String()
	case c.check != nil && (v == vAccepted || v == vClear):
		wrong = c.check(ctx, r.e, a)
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
	e := r.e
	fail := func(input, problem string) { r.rep.fail(row.key(), class, input, problem) }
	if !e.t.alive() {
		row.crashes++
		fail("(process)", "crash: mcpblob exited: "+e.t.exitState())
		if err := r.restart(); err != nil {
			return err
		}
	}
	st := e.checkStore(ctx)
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
		if err := e.seedStore(ctx); err != nil {
			fail("(store)", "restoring the baseline: "+err.Error())
		}
	}
	if why := e.healthy(ctx); why != "" {
		row.crashes++
		fail("(normal request)", "hang: the server stopped serving: "+why)
	}
	seg := r.logs.next()
	for _, p := range panics(seg) {
		row.crashes++
		fail("(log)", "panic in the log: "+p)
	}
	for _, h := range e.sec.scan(seg) {
		row.secrets++
		fail("(log)", "secret in the log ("+h.kind+"): "+h.line)
	}
	return nil
}

// restart brings a crashed server back on the same port, store and keys.
func (r *runner) restart() error {
	r.e.forgetSessions()
	if err := r.e.t.start(); err != nil {
		return fmt.Errorf("restarting mcpblob after a crash: %w", err)
	}
	time.Sleep(100 * time.Millisecond)
	return nil
}
