package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/badupstream"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// gatewayTimeout is the gateways' --upstream-timeout: the hang bound of
// the behaviours that end at it.
const gatewayTimeout = 2 * time.Second

// gatewayRSSGrowth bounds the gateway's RSS growth over its size after
// start-up while a hostile upstream sends it endless and huge answers.
const gatewayRSSGrowth = 64 << 20

// gatewayTarget is `mcpblob serve --upstream upstream` with the run's keys,
// its own credential toward the upstream and a signing key for the
// principal header (both registered as secrets).
// token "" is a fresh one.
func gatewayTarget(name, bin, work, upstream, token string, sec *secrets) (*target, error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, err
	}
	if token == "" {
		token = "upstream_" + rand.Text() + rand.Text()
	}
	key := rand.Text() + rand.Text()
	sec.Add("the gateway's upstream token", token)
	sec.Add("the gateway's principal key", key)
	args := append(serveArgs(addr, sec), "--data", filepath.Join(work, name+"-data"), "--upstream", upstream,
		"--upstream-timeout", gatewayTimeout.String())
	return &target{name: name, bin: bin, addr: addr, logPath: filepath.Join(work, name+".log"), args: args,
		env: []string{"MCPBLOB_UPSTREAM_TOKEN=" + token, "MCPBLOB_UPSTREAM_PRINCIPAL_KEY=" + key}}, nil
}

// driveHostileUpstream starts a gateway in front of the hostile upstream
// (package badupstream) and makes one normal client call through it per
// behaviour: a tools/call, or a resources/stream and the GET of its
// downloadUrl. Each answer must be what the behaviour names (a relayed
// answer, a 502/504 JSON-RPC error naming the upstream problem, a cut
// body), within the bound of its kind; the gateway must stay up, its RSS
// within gatewayRSSGrowth of its size after start-up, its log free of
// panics and secrets, and the client's key must never reach the upstream.
func driveHostileUpstream(ctx context.Context, c config, bin, work string, sec *secrets, rep *report) error {
	up, err := badupstream.Start(c.upstreamSize)
	if err != nil {
		return err
	}
	defer up.Close()
	t, err := gatewayTarget("gateway", bin, work, up.URL(), "", sec)
	if err != nil {
		return err
	}
	if err := t.start(); err != nil {
		return err
	}
	defer t.stop()
	rep.setup = append(rep.setup, fmt.Sprintf("gateway: mcpblob --upstream on %s in front of a hostile upstream (%s, answers of %d MiB), --upstream-timeout %s; log %s",
		t.addr, up.URL(), c.upstreamSize>>20, gatewayTimeout, t.logPath))
	time.Sleep(200 * time.Millisecond)
	x := rep.row("gateway", "hostile upstream")
	x.maxRSS = sysinfo.RSS(t.pid()) + gatewayRSSGrowth
	mon := newMonitor(t, c)
	mctx, stopMon := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { mon.run(mctx) })
	mon.phase(x.key())
	gc := &gatewayClient{base: t.base(), key: sec.apiKeys["alice"], hc: &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}, sec: sec}
	for _, b := range badupstream.Behaviours {
		if ctx.Err() != nil {
			break
		}
		x.inputs++
		if problem := gc.judge(ctx, b, c.upstreamSize); problem != "" {
			x.wrong++
			rep.fail(x.key(), "hostile upstream", b.Name, problem)
		} else if b.Outcome == badupstream.Refused {
			x.clear++
		} else {
			x.accepted++
		}
		if !t.alive() {
			x.crashes++
			rep.fail(x.key(), "hostile upstream", b.Name, "crash: mcpblob exited: "+t.exitState())
			if err := t.start(); err != nil {
				break
			}
		}
	}
	rep.note("gateway hostile upstream, what each behaviour got (HTTP status, time): %s", strings.Join(gc.seen, "; "))
	e := hostile.NewEnv(hostile.Options{Name: t.name, Addr: t.addr, APIKeys: sec.apiKeys, Keyring: sec.keyring,
		CaseLimit: c.caseLimit, Seed: c.seed}, sec, newInventory(false))
	mon.phase(rep.row("gateway", "/g/ downloads").key())
	gc.driveDownloadAbuse(ctx, rep, wire.NewRules(work, c.repo), e, c.flips)
	stopMon()
	wg.Wait()
	rep.absorb(mon)
	checkUpstreamSaw(rep, x, up, sec)
	t.stop()
	checkWholeLog(rep, x.surface, t, sec)
	return nil
}

// checkUpstreamSaw fails the run when the upstream received a client's
// key (token passthrough) or followed a redirect.
func checkUpstreamSaw(rep *report, x *row, up *badupstream.Server, sec *secrets) {
	for _, a := range up.Authorizations() {
		for holder, key := range sec.apiKeys {
			if strings.Contains(a, key) {
				x.secrets++
				rep.fail(x.key(), "hostile upstream", "(upstream)", "the client's API key ("+holder+") reached the upstream")
			}
		}
	}
	if n := up.Followed(); n > 0 {
		x.wrong++
		rep.fail(x.key(), "hostile upstream", "redirect", fmt.Sprintf("the gateway followed the upstream's redirect %d times (its credential and principal header go to the Location)", n))
	}
}

// checkWholeLog reads t's whole log for panics and secrets, failing the
// row of surface on target when it finds any.
func checkWholeLog(rep *report, surface string, t *target, sec *secrets) {
	seg := (&logTail{path: t.logPath}).next()
	ps, hits := panics(seg), sec.scan(seg)
	if len(ps) == 0 && len(hits) == 0 {
		return
	}
	x := rep.row("gateway", surface)
	for _, p := range ps {
		x.crashes++
		rep.fail(x.key(), "logs", "(log)", "panic in the log: "+p)
	}
	for _, h := range hits {
		x.secrets++
		rep.fail(x.key(), "logs", "(log)", "secret in the log ("+h.kind+"): "+h.line)
	}
}

// gatewayClient is a normal client of the gateway: alice's key, the
// 2026-07-28 era (stateless), resources/stream declared.
type gatewayClient struct {
	base, key string
	hc        *http.Client
	sec       *secrets
	seen      []string // what each behaviour got, for the report
}

// reply is what the client got: the status, the start of the body, the
// body's length, whether it broke off, and how long it all took.
type reply struct {
	status int
	ctype  string
	head   []byte
	n      int64
	cut    error
	took   time.Duration
	bad    int64 // for downloads: the first byte that differs from the pattern (-1: none)
}

// bound is how long a behaviour's exchange may take before it is a hang:
// the gateway's upstream timeout (and slack) for those that end there;
// generous for the rest, which end when the upstream's bytes do.
func bound(b badupstream.Behaviour) time.Duration {
	if b.Timeout {
		return gatewayTimeout + 8*time.Second
	}
	return 60 * time.Second
}

// judge makes b's call and returns what is wrong with the answer ("" =
// right).
func (gc *gatewayClient) judge(ctx context.Context, b badupstream.Behaviour, size int64) string {
	ctx, cancel := context.WithTimeout(ctx, bound(b))
	defer cancel()
	var r reply
	if b.Download {
		url, why := gc.downloadURL(ctx, b.Name)
		if why != "" {
			return why
		}
		r = gc.do(ctx, http.MethodGet, url, nil, nil)
	} else {
		body := hostile.RPC("tools/call", hostile.WithMeta(map[string]any{"name": b.Name, "arguments": map[string]any{}}, nil))
		r = gc.do(ctx, http.MethodPost, gc.base+"/mcp", body, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": b.Name})
	}
	gc.seen = append(gc.seen, b.Name+" "+r.short())
	if ctx.Err() != nil {
		return fmt.Sprintf("hang: no whole answer within %s (%s)", bound(b), r)
	}
	return want(b, r, size)
}

// short is r for the report's note: the status, or the cut, and the time.
func (r reply) short() string {
	s := fmt.Sprintf("%d", r.status)
	switch {
	case r.status == 0:
		s = "no status"
	case r.cut != nil:
		s += fmt.Sprintf(" cut after %d bytes", r.n)
	case r.status == 200:
		s += fmt.Sprintf(" (%d bytes)", r.n)
	}
	return s + " in " + r.took.Round(time.Millisecond).String()
}

func (r reply) String() string {
	s := fmt.Sprintf("HTTP %d %s, %d bytes in %s", r.status, r.ctype, r.n, r.took.Round(time.Millisecond))
	if r.cut != nil {
		s += ", cut: " + r.cut.Error()
	}
	return s + ": " + clip(string(r.head), 200)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// downloadURL asks the gateway for a resources/stream of bad://name and
// returns its downloadUrl (registered as a secret).
func (gc *gatewayClient) downloadURL(ctx context.Context, name string) (string, string) {
	caps := map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": 1 << 40}}
	uri := "bad://" + name
	body := hostile.RPC("resources/stream", hostile.WithMeta(map[string]any{"uri": uri}, caps))
	r := gc.do(ctx, http.MethodPost, gc.base+"/mcp", body, map[string]string{"Mcp-Method": "resources/stream", "Mcp-Name": uri})
	var m struct {
		Result struct {
			DownloadURL string `json:"downloadUrl"`
		} `json:"result"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.head, &m) != nil || m.Result.DownloadURL == "" {
		return "", "resources/stream through the gateway gave no downloadUrl: " + r.String()
	}
	url := m.Result.DownloadURL
	if i := strings.Index(url, "/g/"); i >= 0 {
		gc.sec.Add("/g token", url[i+len("/g/"):])
	}
	return url, ""
}

// do sends one request as alice and reads the whole answer (checking a
// download's bytes against the pattern as they come).
func (gc *gatewayClient) do(ctx context.Context, method, url string, body []byte, hdr map[string]string) reply {
	start := time.Now()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return reply{cut: err}
	}
	req.Header.Set("Authorization", "Bearer "+gc.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", hostile.ModernVersion)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := gc.hc.Do(req)
	if err != nil {
		return reply{cut: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	pc := &patternCheck{head: 4 << 10, bad: -1}
	r.n, r.cut = io.Copy(pc, resp.Body)
	r.head, r.bad, r.took = pc.kept, pc.bad, time.Since(start)
	return r
}

// patternCheck keeps the first head bytes written and notes the first
// byte that differs from badupstream.Pattern.
type patternCheck struct {
	head int
	kept []byte
	off  int64
	bad  int64
}

func (p *patternCheck) Write(b []byte) (int, error) {
	if keep := p.head - len(p.kept); keep > 0 {
		p.kept = append(p.kept, b[:min(keep, len(b))]...)
	}
	for i, c := range b {
		if p.bad < 0 && c != badupstream.Pattern(p.off+int64(i)) {
			p.bad = p.off + int64(i)
		}
	}
	p.off += int64(len(b))
	return len(b), nil
}

// driveGateways runs the gateway passes: hostile clients in front of a
// well-behaved upstream, then a hostile upstream.
func driveGateways(ctx context.Context, c config, bin, work string, sec *secrets, rep *report) error {
	if ctx.Err() == nil && c.runs("gateway hostile clients") {
		if err := driveGatewayClients(ctx, c, bin, work, sec, rep); err != nil {
			return err
		}
	}
	if ctx.Err() == nil && c.runs("gateway hostile upstream") {
		if err := driveHostileUpstream(ctx, c, bin, work, sec, rep); err != nil {
			return err
		}
	}
	return nil
}
