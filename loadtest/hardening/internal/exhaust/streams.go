package exhaust

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Streams opens ten times the per-principal stream limit of notification
// streams, half standalone GET streams (each on a session of its own) and
// half subscriptions/listen streams, and holds them all open.
func Streams(ctx context.Context, t *Target) *Phase {
	n := int(10 * t.Limits.StreamsPerPrincipal)
	p := newPhase(fmt.Sprintf("streams: %d GET and subscriptions/listen streams", n))
	open := t.openStreams(ctx, p, n)
	p.Bounds = append(p.Bounds, Bound{"notification streams open at once", open, t.Limits.StreamsPerPrincipal, false})
	return p
}

// openStreams opens n streams at once, every other one a GET stream, the
// rest listen streams, holds them for t.Hold, closes them, and returns how
// many were open.
func (t *Target) openStreams(ctx context.Context, p *Phase, n int) int64 {
	var mu sync.Mutex
	var hs []*held
	var open int64
	var st statuses
	parallel(n, t.Workers, func() bool { return ctx.Err() != nil }, func(i int) {
		var a *wire.Answer
		var h *held
		var ok bool
		what := "GET /mcp stream"
		if i%2 == 0 {
			a, h = t.getStream(ctx, p)
			ok = a != nil && h != nil
		} else {
			what = "subscriptions/listen"
			a, h = t.listen(ctx, nil)
			_, ok = acknowledged(a)
		}
		if a == nil {
			return
		}
		st.add(a.Status)
		mu.Lock()
		defer mu.Unlock()
		hs = append(hs, h)
		if ok {
			open++
			p.judged(what, wire.Accepted, "")
			return
		}
		v, why := wire.JudgeLimit(a)
		p.judged(what, v, why)
	})
	holdThenClose(ctx, t, hs)
	p.note("answers: %s", st.String())
	return open
}

// getStream opens a session and its standalone GET stream; nil when the
// session could not be opened (recorded in p).
func (t *Target) getStream(ctx context.Context, p *Phase) (*wire.Answer, *held) {
	sid, a := t.initialize(ctx, t.Attacker, json.RawMessage(`{}`))
	if sid == "" {
		v, why := wire.JudgeLimit(a)
		p.judged("initialize", v, why)
		return nil, nil
	}
	return t.open(ctx, func(ctx context.Context) *http.Request {
		return t.mcp(mcptest.Version20251125, t.Attacker, sid).NewGet(ctx, "").Request
	}, false)
}

// Pending starts ten times the per-principal pending limit of 2025-11-25
// tools/call request_upload in form mode, on sessions that declared
// elicitation, with the principal's blobs:write key; nobody answers the
// elicitation/create each sends, so each call waits, held open.
func Pending(ctx context.Context, t *Target) *Phase {
	n := int(10 * t.Limits.PendingPerPrincipal)
	p := newPhase(fmt.Sprintf("pending: %d request_upload waiting on elicitation", n))
	sids := t.openSessions(ctx, p, 8, t.Writer, json.RawMessage(`{"elicitation":{"form":{}}}`))
	if len(sids) == 0 {
		p.fail("initialize", "no session could be opened, so the phase could not be driven (see its notes for the limits that refused them)")
		return p
	}
	var mu sync.Mutex
	var hs []*held
	var waiting int64
	parallel(n, t.Workers, func() bool { return ctx.Err() != nil }, func(i int) {
		a, h := t.open(ctx, func(ctx context.Context) *http.Request {
			return t.call(ctx, t.Writer, sids[i%len(sids)], "tools/call",
				map[string]any{"name": "request_upload", "arguments": map[string]any{"mode": "form"}})
		}, true)
		mu.Lock()
		defer mu.Unlock()
		hs = append(hs, h)
		if isElicitation(a) {
			waiting++
			p.judged("tools/call request_upload", wire.Accepted, "")
			return
		}
		v, why := wire.JudgeLimit(a)
		p.judged("tools/call request_upload", v, why)
	})
	holdThenClose(ctx, t, hs)
	p.Bounds = append(p.Bounds, Bound{"elicitations waiting for an answer", waiting, t.Limits.PendingPerPrincipal, false})
	t.endSessions(ctx, p, sids)
	return p
}

// isElicitation reports whether a is an SSE stream whose first event is a
// server-to-client elicitation request.
func isElicitation(a *wire.Answer) bool {
	if a.Status != http.StatusOK || !strings.HasPrefix(a.ContentType(), "text/event-stream") {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(eventData(a.Body), &m) == nil && len(m.ID) > 0 && strings.HasPrefix(m.Method, "elicitation/")
}
