package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// gatewaySurfaces are the surfaces the hostile clients drive through the
// gateway: its MCP endpoint, both eras, and resources/stream (the rest of
// its listener is mcpblob's own blob service, driven by the local pass).
var gatewaySurfaces = map[string]bool{hostile.Legacy.Name: true, hostile.Modern.Name: true, hostile.Stream.Name: true}

// gatewaySkipped are the classes not sent through the gateway: the wrong
// principal class asks the upstream to tell principals apart, which an
// upstream that takes the gateway's one credential (mcpblob here) cannot;
// the principal reaches it only in the signed header it may verify.
var gatewaySkipped = map[string]bool{"wrong principal": true}

// driveGatewayClients starts mcpblob (the upstream, a local store) and a
// gateway in front of it whose credential is alice's key there, and sends
// every class's /mcp batches to the gateway, with the after-batch checks
// of the local pass: the gateway alive, its RSS within gatewayRSSGrowth of
// its size after start-up and its log clean, the upstream's
// store holding exactly what the answers named, normal requests working;
// at the end, the upstream's whole log without a panic or a secret.
func driveGatewayClients(ctx context.Context, c config, bin, work string, sec *secrets, rep *report) error {
	upAddr, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	up := &target{name: "gateway upstream", bin: bin, addr: upAddr, logPath: filepath.Join(work, "gateway-upstream.log"),
		args: append(serveArgs(upAddr, sec), "--data", filepath.Join(work, "gateway-upstream-data"))}
	if err := up.start(); err != nil {
		return err
	}
	defer up.stop()
	t, err := gatewayTarget("gateway+mcpblob", bin, work, up.base()+"/mcp", sec.apiKeys["alice"], sec)
	if err != nil {
		return err
	}
	rep.setup = append(rep.setup, fmt.Sprintf("gateway+mcpblob: mcpblob --upstream on %s in front of mcpblob on %s (its credential: alice's key there; the store checked is the upstream's); /mcp classes but %q; logs %s, %s",
		t.addr, upAddr, "wrong principal", t.logPath, up.logPath))
	if err := t.start(); err != nil {
		return err
	}
	defer t.stop()
	limit := sysinfo.RSS(t.pid()) + gatewayRSSGrowth
	for _, s := range []hostile.Surface{hostile.Legacy, hostile.Modern, hostile.Stream} {
		rep.row(t.name, s.Name).maxRSS = limit
	}
	inv := newInventory(false) // every principal is alice at the upstream
	e := hostile.NewEnv(hostile.Options{Name: t.name, Addr: t.addr, APIAddr: upAddr, APIKeys: sec.apiKeys, Keyring: sec.keyring,
		Flips: c.flips, CaseLimit: c.caseLimit, Seed: c.seed}, sec, inv)
	mon := newMonitor(t, c)
	mctx, stopMon := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { mon.run(mctx) })
	r := &runner{e: e, t: t, cfg: c, sec: sec, inv: inv, rules: wire.NewRules(work, c.repo), rep: rep, mon: mon,
		logs: &logTail{path: t.logPath}, pass: "gateway hostile clients: ", keep: func(b hostile.Batch) bool { return gatewaySurfaces[b.Surface.Name] && !gatewaySkipped[b.Class] }}
	r.refusedLater = r.downloadRefused
	mon.phase(t.name + " setup")
	err = r.seedStore(ctx)
	if err == nil {
		err = r.runClasses(ctx)
	}
	stopMon()
	wg.Wait()
	t.stop()
	r.shutdownLogs()
	rep.absorb(mon)
	up.stop()
	checkWholeLog(rep, "(upstream mcpblob's log)", up, sec)
	return err
}

// downloadRefused accepts a resources/stream answered with the gateway's
// own downloadUrl when that URL's GET is refused clearly: the gateway
// mints it without reading the resource (docs/gateway.md), so the
// upstream's refusal of a hostile URI shows at the download.
func (r *runner) downloadRefused(ctx context.Context, a *wire.Answer) string {
	var m struct {
		Result struct {
			DownloadURL string `json:"downloadUrl"`
		} `json:"result"`
	}
	if json.Unmarshal(a.Body, &m) != nil {
		return "accepted; it must be refused: " + a.String()
	}
	_, path, ok := strings.Cut(m.Result.DownloadURL, "/g/")
	if !ok {
		return "accepted; it must be refused: " + a.String()
	}
	r.sec.Add("/g token", path)
	g := wire.Do(r.e.HTTP, r.e.Request(ctx, http.MethodGet, "/g/"+path, "alice", nil))
	if v, why := r.rules.Judge(wire.ShapeAPI, true, g); v != wire.Clear {
		return fmt.Sprintf("the gateway's downloadUrl for it was not refused clearly (%s): %s", why, g)
	}
	return ""
}
