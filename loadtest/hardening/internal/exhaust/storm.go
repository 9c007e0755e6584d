package exhaust

import (
	"context"
	"encoding/json"
	"fmt"
)

// Storm is the state storm: one principal opens sessions 2025-11-25 sessions,
// then streams notification streams (every other one a GET stream on one of
// the newest sessions, the rest subscriptions/listen), holds them for t.Hold
// and closes them. What the server answers is judged like the phases'; the
// node's RSS and a bystander's latencies are measured by the caller
// meanwhile.
func Storm(ctx context.Context, t *Target, sessions, streams int) *Phase {
	p := newPhase(fmt.Sprintf("state storm: %d sessions, %d streams", sessions, streams))
	stop := t.peakGauge(ctx, sessionsGauge)
	sids := t.openSessions(ctx, p, sessions, t.Attacker, json.RawMessage(`{}`))
	p.note("%d of %d sessions opened", len(sids), sessions)
	open := t.openStreams(ctx, p, streams)
	t.sessionsBound(p, stop)
	p.note("%d of %d streams open at once", open, streams)
	p.Bounds = append(p.Bounds, Bound{"notification streams open at once", open, t.Limits.StreamsPerPrincipal, false})
	return p
}
