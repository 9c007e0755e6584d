package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// maxUpload is the server's --max-upload: small enough that a 1 GiB
// Content-Length is over it (the Expect: 100-continue inputs).
const maxUpload = 256 << 20

// serveArgs are the flags every target starts with: known API keys and
// token keys, debug logging (the secrets check wants every log line).
func serveArgs(addr string, sec *secrets) []string {
	return []string{"serve", "--listen", addr, "--auth-keys", sec.authKeysPath, "--token-keys", sec.tokenKeysPath,
		"--log-level", "debug", "--max-upload", fmt.Sprint(maxUpload)}
}

// driveLocal runs every class and both storms against mcpblob on a local
// store in the work folder.
func driveLocal(ctx context.Context, c config, bin, work string, sec *secrets, feats features, rep *report) error {
	addr, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	data := filepath.Join(work, "data")
	t := &target{name: "local", bin: bin, addr: addr, logPath: filepath.Join(work, "local.log"),
		args: append(serveArgs(addr, sec), "--data", data)}
	rep.setup = append(rep.setup, fmt.Sprintf("local: mcpblob on %s, local store %s, --log-level debug, --max-upload %d, API keys of alice, bob and mallory, one token key; log %s", addr, data, maxUpload, t.logPath))
	if err := drivePass(ctx, c, t, sec, feats, rep, work, true); err != nil {
		return err
	}
	return driveState(ctx, c, bin, work, sec, feats, rep)
}

// driveS3 runs every class (no storms) against mcpblob on a fresh
// single-node SeaweedFS.
func driveS3(ctx context.Context, c config, bin, work string, sec *secrets, feats features, rep *report) error {
	creds := weed.S3Options{AccessKey: "hardening", SecretKey: rand.Text()}
	sec.Add("S3 secret key", creds.SecretKey)
	t0 := time.Now()
	w, err := weed.StartServer(c.weed, filepath.Join(work, "weed"), creds)
	if err != nil {
		return err
	}
	defer w.Stop()
	client, err := weed.Client(w.Addr.HTTP, creds)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := weed.Writable(wctx, client, s3Bucket); err != nil {
		return err
	}
	ready := time.Since(t0)
	addr, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	t := &target{name: "S3", bin: bin, addr: addr, logPath: filepath.Join(work, "s3.log"),
		args: append(serveArgs(addr, sec), "--s3-endpoint", "http://"+w.Addr.HTTP, "--s3-bucket", s3Bucket),
		env:  []string{"MCPBLOB_S3_ACCESS_KEY=" + creds.AccessKey, "MCPBLOB_S3_SECRET_KEY=" + creds.SecretKey}}
	rep.setup = append(rep.setup, fmt.Sprintf("S3: mcpblob on %s over SeaweedFS %s on %s (one node: `weed server -s3`, ready for writes %.1f s after its start), default stream mode (redirect: presigned URLs are checked in the logs); log %s",
		addr, weed.Version(c.weed), w.Addr.HTTP, ready.Seconds(), t.logPath))
	return drivePass(ctx, c, t, sec, feats, rep, work, false)
}

// s3Bucket is the S3 pass's bucket.
const s3Bucket = "hardening"

// drivePass starts t, seeds its store, sends every class (and the storms when
// asked), verifies the store and the whole log, and stops t.
func drivePass(ctx context.Context, c config, t *target, sec *secrets, feats features, rep *report, work string, storms bool) error {
	if err := t.start(); err != nil {
		return err
	}
	inv := newInventory(feats.tenancy)
	e := hostile.NewEnv(hostile.Options{Name: t.name, Addr: t.addr, APIKeys: sec.apiKeys, Keyring: sec.keyring, Tenancy: feats.tenancy,
		Flips: c.flips, CaseLimit: c.caseLimit, Seed: c.seed}, sec, inv)
	mon := newMonitor(t, c)
	mctx, stopMon := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { mon.run(mctx) })
	r := &runner{e: e, t: t, cfg: c, sec: sec, inv: inv, rules: wire.NewRules(work, c.repo), rep: rep, mon: mon, logs: &logTail{path: t.logPath}}
	mon.phase(t.name + " setup")
	err := r.seedStore(ctx)
	if err == nil {
		err = r.runClasses(ctx)
	}
	if err == nil && storms {
		err = r.runStorms(ctx)
	}
	if err == nil {
		r.finalChecks(ctx)
	}
	stopMon()
	wg.Wait()
	t.stop()
	r.shutdownLogs()
	rep.absorb(mon)
	return err
}

// finalChecks reads every object back and compares it with its listing.
func (r *runner) finalChecks(ctx context.Context) {
	r.mon.phase(r.t.name + " final checks")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	bad := r.verifyAll(ctx, 5000)
	if len(bad) == 0 {
		return
	}
	x := r.rep.row(r.t.name, "(final read-back)")
	for _, b := range bad {
		x.half++
		r.rep.fail(x.key(), "store", "(read-back)", "half-written: "+b)
	}
}

// shutdownLogs checks the log lines written after the last check (the
// shutdown included) for panics and secrets.
func (r *runner) shutdownLogs() {
	seg := r.logs.next()
	ps, hits := panics(seg), r.sec.scan(seg)
	if len(ps) == 0 && len(hits) == 0 {
		return
	}
	x := r.rep.row(r.t.name, "(last log lines)")
	for _, p := range ps {
		x.crashes++
		r.rep.fail(x.key(), "logs", "(log)", "panic in the log: "+p)
	}
	for _, h := range hits {
		x.secrets++
		r.rep.fail(x.key(), "logs", "(log)", "secret in the log ("+h.kind+"): "+h.line)
	}
}
