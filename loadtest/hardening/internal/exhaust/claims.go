package exhaust

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Claims makes ten times the per-minute claims limit of claims: half
// session DELETEs (each on a session opened for it), half redemptions of
// single-use links with Range: bytes=0-0 (each link minted for it, with
// the blobs:read key). t.ClaimCount's growth must stay within the limit
// over the minutes the phase touched (a fixed window a minute: at most two
// for a phase under a minute).
func Claims(ctx context.Context, t *Target) *Phase {
	count := t.ClaimCount
	if count == nil {
		count = func() int { return -1 }
	}
	n := int(10 * t.Limits.ClaimsPerMinute)
	p := newPhase(fmt.Sprintf("claims: %d session DELETEs and single-use redemptions", n))
	before, start := count(), time.Now()
	var dels, reds statuses
	parallel(n, t.Workers, func() bool { return ctx.Err() != nil }, func(i int) {
		if i%2 == 0 {
			if code, sent := t.deleteOne(ctx, p); sent {
				dels.add(code)
			}
		} else if code, sent := t.redeemOne(ctx, p); sent {
			reds.add(code)
		}
	})
	after := count()
	windows := int64(time.Since(start)/time.Minute) + 2
	if before >= 0 && after >= 0 {
		p.Bounds = append(p.Bounds, Bound{fmt.Sprintf("claims written to the store (over at most %d minute windows)", windows),
			int64(after - before), windows * t.Limits.ClaimsPerMinute, false})
	} else {
		p.note("the store's claims could not be counted")
	}
	p.note("session DELETE answers: %s; redemption answers: %s; claims in the store %d → %d", or(dels.String(), "none sent"), or(reds.String(), "none sent"), before, after)
	return p
}

// deleteOne opens a session and deletes it; it returns the DELETE's
// status, sent false when there was no session to delete.
func (t *Target) deleteOne(ctx context.Context, p *Phase) (status int, sent bool) {
	sid, a := t.initialize(ctx, t.Attacker, json.RawMessage(`{}`))
	if sid == "" {
		v, why := wire.JudgeLimit(a)
		p.judged("initialize", v, why)
		return 0, false
	}
	a = t.do(t.mcp(mcptest.Version20251125, t.Attacker, sid).NewDelete(ctx).Request)
	v, why := wire.JudgeLimit(a)
	p.judged("DELETE /mcp", v, why)
	return a.Status, true
}

// redeemOne mints a single-use link to t.Blob and redeems it with
// Range: bytes=0-0; it returns the redemption's status, sent false when
// no link could be minted.
func (t *Target) redeemOne(ctx context.Context, p *Phase) (status int, sent bool) {
	tok := t.mintLink(ctx, p)
	if tok == "" {
		return 0, false
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+t.Addr+"/d/"+tok, nil)
	req.Header.Set("Range", "bytes=0-0")
	a := t.do(req)
	v, why := wire.JudgeClaims(a)
	p.judged("GET /d/<single-use token>", v, why)
	return a.Status, true
}

// mintLink mints a single-use link to t.Blob as the attacker (blobs:read
// mints download links) and returns its token, "" when refused.
func (t *Target) mintLink(ctx context.Context, p *Phase) string {
	body, _ := json.Marshal(map[string]any{"key": t.Blob, "singleUse": true, "ttlSeconds": 600})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+t.Addr+"/v1/links", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+t.Attacker)
	req.Header.Set("Content-Type", "application/json")
	a := t.do(req)
	var r struct{ URL string }
	if a.Status != http.StatusCreated || json.Unmarshal(a.Body, &r) != nil || !strings.Contains(r.URL, "/d/") {
		p.fail("POST /v1/links", "minting a single-use link failed: "+a.String())
		return ""
	}
	tok := r.URL[strings.Index(r.URL, "/d/")+3:]
	if t.Secret != nil {
		t.Secret("/d token", tok)
	}
	return tok
}

// or is s, or alt when s is empty.
func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
