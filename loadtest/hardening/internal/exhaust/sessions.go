package exhaust

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Sessions opens ten times the per-principal session limit of 2025-11-25
// sessions; the node's own count of the sessions it holds (its
// mcpblob_sessions_active gauge, sampled throughout: only the attacker
// opens sessions on the node) must stay within the limit. (A session's
// answering is no measure: the node rebuilds a validly signed session it
// does not hold on its next request.)
func Sessions(ctx context.Context, t *Target) *Phase {
	n := int(10 * t.Limits.SessionsPerPrincipal)
	p := newPhase(fmt.Sprintf("sessions: %d initialize", n))
	stop := t.peakGauge(ctx, sessionsGauge)
	sids := t.openSessions(ctx, p, n, t.Attacker, json.RawMessage(`{}`))
	t.sessionsBound(p, stop)
	p.note("%d sessions opened", len(sids))
	return p
}

// sessionsBound adds the bound on the sessions the node held, from a
// peakGauge of sessionsGauge.
func (t *Target) sessionsBound(p *Phase, stop func() (float64, bool)) {
	peak, ok := stop()
	if !ok {
		p.fail("(admin /metrics)", "the node's "+sessionsGauge+" could not be read from --admin-listen")
		return
	}
	p.Bounds = append(p.Bounds, Bound{"2025-11-25 sessions the node held (" + sessionsGauge + ", peak)", int64(peak), t.Limits.SessionsPerPrincipal, false})
}

// openSessions sends n initializes with caps as key and returns the ids
// of the sessions opened.
func (t *Target) openSessions(ctx context.Context, p *Phase, n int, key string, caps json.RawMessage) []string {
	var mu sync.Mutex
	var sids []string
	refused := map[string]int{}
	parallel(n, t.Workers, func() bool { return ctx.Err() != nil }, func(int) {
		sid, a := t.initialize(ctx, key, caps)
		v, why := wire.JudgeLimit(a)
		if v == wire.Accepted && sid == "" {
			p.fail("initialize", "a success without Mcp-Session-Id: "+a.String())
			return
		}
		p.judged("initialize", v, why)
		mu.Lock()
		defer mu.Unlock()
		if sid != "" {
			sids = append(sids, sid)
		} else if o, ok := wire.Outcome(a); v == wire.Clear && ok && o.Error != nil {
			refused[o.Error.Data.Limit]++
		}
	})
	for limit, k := range refused {
		p.note("%d initialize refused by the limit %s", k, limit)
	}
	return sids
}

// bigCaps are capabilities of about size bytes, members of 1,000-byte
// strings (no single string near the 64 KiB a parameter string may have):
// the bulk in experimental (which the server never reads) or inside
// elicitation (which it does).
func bigCaps(size int, inElicitation bool) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"form":{}`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `,"k%d":"%s"`, i, strings.Repeat("A", 1000))
	}
	b.WriteString("}")
	if inElicitation {
		return json.RawMessage(`{"elicitation":` + b.String() + `}`)
	}
	return json.RawMessage(`{"experimental":` + b.String() + `}`)
}

// capSize is the capabilities object of the big initializes: a body just
// under the 4 MiB MCP message limit.
const capSize = 3_700_000

// Capabilities sends n initializes whose capabilities are ~3.7 MiB, half
// with the bulk where the server reads. Each must be refused or kept small
// (the node's RSS is the measure).
func Capabilities(ctx context.Context, t *Target, n int) *Phase {
	p := newPhase(fmt.Sprintf("capabilities: %d initialize of 3.7 MiB", n))
	bodies := [2]json.RawMessage{bigCaps(capSize, false), bigCaps(capSize, true)}
	opened := 0
	var mu sync.Mutex
	// Two at a time: what a server that keeps nothing still needs while
	// it reads a body grows with the bodies in flight, not with n.
	parallel(n, 2, func() bool { return ctx.Err() != nil }, func(i int) {
		sid, a := t.initialize(ctx, t.Attacker, bodies[i%2])
		v, why := judgeCaps(a)
		p.judged("initialize with 3.7 MiB capabilities", v, why)
		if sid != "" {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	})
	p.note("%d of %d sessions opened", opened, n)
	return p
}

// judgeCaps is JudgeLimit, and a -32602 error that names the capabilities
// is clear too: that is the refusal --max-capability-bytes documents.
func judgeCaps(a *wire.Answer) (wire.Verdict, string) {
	v, why := wire.JudgeLimit(a)
	if o, ok := wire.Outcome(a); v == wire.Unclear && ok && o.Error != nil && o.Error.Code == -32602 &&
		strings.Contains(strings.ToLower(o.Error.Message), "capabilit") && a.Status < 500 {
		return wire.Clear, ""
	}
	return v, why
}
