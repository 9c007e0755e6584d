package exhaust

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// uriLen is the length of the URIs subscribed to: just under core/mcp's
// MaxURIBytes (8 KiB), each naming a blob that does not exist.
const uriLen = 8150

// uri is the i-th subscription URI of a phase (tag keeps phases apart).
func uri(tag string, i int) string {
	u := fmt.Sprintf("blob:///exhaust/%s/%d/", tag, i)
	return u + strings.Repeat("x", uriLen-len(u))
}

// perSession is how many subscriptions one session is sent: under a
// session's own bound (1,024).
const perSession = 512

// Subscribe sends ten times what the per-principal limits allow of
// resources/subscribe with 8 KiB URIs, over several sessions: everything
// accepted is held, and must stay within the count and byte limits. The
// sessions are then deleted (their subscriptions go with them).
func Subscribe(ctx context.Context, t *Target) *Phase {
	l := t.Limits
	n := int(10 * min(l.SubscriptionsPerPrincipal, l.SubscriptionBytesPerPrincipal/uriLen))
	nsess := max((n+perSession-1)/perSession, 8)
	p := newPhase(fmt.Sprintf("subscriptions: %d resources/subscribe of 8 KiB over %d sessions", n, nsess))
	sids := t.openSessions(ctx, p, nsess, t.Attacker, json.RawMessage(`{}`))
	if len(sids) == 0 {
		p.fail("initialize", "no session could be opened, so the phase could not be driven (see its notes for the limits that refused them)")
		return p
	}
	var mu sync.Mutex
	var count, bytes int64
	parallel(n, t.Workers, func() bool { return ctx.Err() != nil }, func(i int) {
		u := uri("sub", i)
		a := t.do(t.call(ctx, t.Attacker, sids[i%len(sids)], "resources/subscribe", map[string]any{"uri": u}))
		v, why := wire.JudgeLimit(a)
		p.judged("resources/subscribe", v, why)
		if v == wire.Accepted {
			mu.Lock()
			count, bytes = count+1, bytes+int64(len(u))
			mu.Unlock()
		}
	})
	p.Bounds = append(p.Bounds, Bound{"subscriptions held", count, l.SubscriptionsPerPrincipal, false},
		Bound{"bytes of subscribed URIs held", bytes, l.SubscriptionBytesPerPrincipal, true})
	t.endSessions(ctx, p, sids)
	return p
}

// endSessions deletes sessions (judged like any answer).
func (t *Target) endSessions(ctx context.Context, p *Phase, sids []string) {
	parallel(len(sids), t.Workers, func() bool { return false }, func(i int) {
		a := t.do(t.mcp(mcptest.Version20251125, t.Attacker, sids[i]).NewDelete(context.WithoutCancel(ctx)).Request)
		v, why := wire.JudgeLimit(a)
		p.judged("DELETE /mcp", v, why)
	})
}

// listenBody is the byte size of one listen's URIs: ~3.7 MiB (a body
// under the 4 MiB message limit), or 90 % of the byte limit when that is
// smaller, so that several streams together pass it.
func listenBody(l Limits) int64 { return min(3_700_000, l.SubscriptionBytesPerPrincipal*9/10) }

// Listen opens subscriptions/listen streams whose resourceSubscriptions
// add up to ten times the per-principal byte limit, holds them all open,
// and counts what the server acknowledged.
func Listen(ctx context.Context, t *Target) *Phase {
	l := t.Limits
	per := int(max(listenBody(l)/uriLen, 1))
	n := int((10*l.SubscriptionBytesPerPrincipal + int64(per*uriLen) - 1) / int64(per*uriLen))
	p := newPhase(fmt.Sprintf("subscriptions/listen: %d streams of %d URIs (%.1f MiB)", n, per, float64(per*uriLen)/(1<<20)))
	var mu sync.Mutex
	var hs []*held
	var subs, bytes, open int64
	parallel(n, min(t.Workers, 4), func() bool { return ctx.Err() != nil }, func(i int) {
		uris := make([]string, per)
		for j := range uris {
			uris[j] = uri(fmt.Sprintf("listen%d", i), j)
		}
		a, h := t.listen(ctx, uris)
		acked, ok := acknowledged(a)
		mu.Lock()
		defer mu.Unlock()
		hs = append(hs, h)
		if ok {
			p.judged("subscriptions/listen", wire.Accepted, "")
			open++
			for _, u := range acked {
				subs, bytes = subs+1, bytes+int64(len(u))
			}
			return
		}
		v, why := wire.JudgeLimit(a)
		p.judged("subscriptions/listen", v, why)
	})
	holdThenClose(ctx, t, hs)
	p.Bounds = append(p.Bounds, Bound{"subscriptions acknowledged on open streams", subs, l.SubscriptionsPerPrincipal, false},
		Bound{"bytes of acknowledged URIs on open streams", bytes, l.SubscriptionBytesPerPrincipal, true},
		Bound{"listen streams open", open, l.StreamsPerPrincipal, false})
	return p
}

// listen opens a subscriptions/listen stream (tools list changes and the
// URIs) as the attacker.
func (t *Target) listen(ctx context.Context, uris []string) (*wire.Answer, *held) {
	return t.open(ctx, func(ctx context.Context) *http.Request {
		n := map[string]any{"toolsListChanged": true}
		if len(uris) > 0 {
			n["resourceSubscriptions"] = uris
		}
		return t.modern(ctx, t.Attacker, "subscriptions/listen", map[string]any{"notifications": n})
	}, true)
}

// acknowledged returns the URIs a listen stream's first event
// acknowledged; ok is false when the first event is no acknowledgement.
func acknowledged(a *wire.Answer) (uris []string, ok bool) {
	if a.Status != http.StatusOK || a.Err != nil {
		return nil, false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(eventData(a.Body), &m) != nil || m.Method != "notifications/subscriptions/acknowledged" {
		return nil, false
	}
	return m.Params.Notifications.ResourceSubscriptions, true
}

// eventData is the data of an SSE event's lines.
func eventData(ev []byte) []byte {
	var data []byte
	for line := range strings.Lines(string(ev)) {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimRight(strings.TrimPrefix(d, " "), "\r\n")...)
		}
	}
	return data
}

// holdThenClose keeps hs open for t.Hold (the node holds them all at
// once meanwhile), then closes them.
func holdThenClose(ctx context.Context, t *Target, hs []*held) {
	select {
	case <-ctx.Done():
	case <-time.After(t.Hold):
	}
	closeAll(hs)
}
