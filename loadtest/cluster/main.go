// Command cluster is the loopback check of target P7 (bench/README.md) behind
// `make cluster` (and, shorter, `make cluster-check` in `make test`): three
// mcpblob nodes on a SeaweedFS cluster — one master, three volume servers
// keeping every volume on two of them (replication 001), one filer and one
// S3 gateway per node, each node on its own gateway — with nginx in front
// configured from deploy/nginx.conf, all on 127.0.0.1 and free ports.
// It checks, and reports in markdown:
//
//   - sessions across nodes: a 2025-11-25 session opened on node 1 is used
//     on nodes 2 and 3 directly and through nginx; a session ended with
//     DELETE /mcp on node 1 is refused (404) on all three nodes, and so is
//     one ended by DELETEs on the three nodes at once (a session is a live
//     record in the store: initialize claims it, DELETE releases it);
//   - links and upload endpoints across nodes: minted by the control API on
//     node 1, used on nodes 2 and 3; a single-use link is redeemed once,
//     whichever node gets it, also when three nodes race for it, and an
//     upload endpoint stores one upload when three nodes race for it;
//   - the claims under them: conditional PUTs (If-None-Match: *) of one key
//     racing on the three S3 gateways create it exactly once per round;
//   - elicitation across nodes: a 2026-07-28 request_upload whose MRTR
//     rounds land on three nodes (round 1 on node 1, the binary upload on
//     node 2, the retry with requestState on node 3), and a 2025-11-25 form
//     elicitation round trip through nginx;
//   - a node killed under load: bounded vegeta load through nginx (MCP reads and
//     tools/list on one session, uploads by PUT and by upload endpoint,
//     ranged link downloads), one node SIGKILLed mid-load. Every upload that
//     got a success answer must read back with its sha256 (through nginx and
//     through the restarted node), the store must hold no partial object,
//     and every failed request must be one that was in flight on the killed
//     node (nginx's access log names the node each request went to);
//   - a SeaweedFS volume server SIGKILLed and its folder wiped under that
//     load: objects stored before keep reading back whole, through nginx
//     and on the surviving nodes, while the load runs and after the volume
//     server is restarted on its empty folder;
//   - tus-js-client (package tusjs): a 1 GiB resumable upload
//     through nginx whose receiving node is SIGKILLed twice, resumed by the
//     client to a blob with the file's sha256, at most one chunk sent
//     again per kill; and an upload with parallelUploads (concatenation);
//   - a graceful shutdown: SIGTERM to a node while a 64 MiB upload streams
//     into it; /readyz answers 503 during --shutdown-delay, the upload
//     finishes within --grace-period and reads back whole.
//
// From loadtest/:
//
//	go run ./cluster                       # tools from ../.tools/bin, nginx from PATH
//	go run ./cluster -profile test         # the make test profile: shorter load
//	go run ./cluster -out /tmp/P7.md -weed ../.tools/bin/weed
//
// It stops everything it started (by PID; Pdeathsig kills the rest if it
// dies) and exits non-zero when a check fails. About 2–2.5 min on 2 cores,
// of which the tus-js-client uploads take 65–100 s (-profile test: 5 s less).
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/cluster/quotacheck"
)

type config struct {
	repo, weed, nginx, out string
	nodeDir                string // the npm test tools (make tools-node): Node and tus-js-client
	profile                string
	duration, killAfter    time.Duration
	bound                  time.Duration // the whole run, build included
	keep                   bool
}

// profiles: the load's length, when the node is killed, and the bound on
// the whole run (the tus-js-client uploads included: 65–100 s of it). "test"
// is what make test runs (cluster-check).
var profiles = map[string]struct{ duration, killAfter, bound time.Duration }{
	"full": {20 * time.Second, 8 * time.Second, 270 * time.Second},
	"test": {12 * time.Second, 5 * time.Second, 240 * time.Second},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cluster: "+format+"\n", args...)
}

func run(ctx context.Context, args []string) (bool, error) {
	c, err := parseConfig(args)
	if err != nil {
		return false, err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.bound)
	defer cancel()
	work, err := os.MkdirTemp("", "mcpblob-cluster-")
	if err != nil {
		return false, err
	}
	if c.keep {
		defer logf("work folder kept: %s", work)
	} else {
		defer os.RemoveAll(work)
	}

	rep := &report{profile: c.profile}
	cl, err := startCluster(ctx, c, work)
	defer cl.stop() // also after a failed start: stops what did start
	if err != nil {
		return false, err
	}
	rep.setup = cl.describe()
	logf("cluster up in %.1fs: %s", time.Since(start).Seconds(), cl.lb)
	runChecks(ctx, c, cl, rep)
	noteLogErrors(cl, rep)
	rep.unmeasured()
	rep.elapsed = time.Since(start)

	md := rep.markdown()
	fmt.Print(md)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(md), 0o644); err != nil {
			return false, err
		}
	}
	return rep.passed(), nil
}

// parseConfig reads the flags and fills in the profile's defaults and the
// tools' paths.
func parseConfig(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.StringVar(&c.repo, "repo", "..", "mcpblob repository `root`")
	fs.StringVar(&c.weed, "weed", "", "SeaweedFS `binary` (default REPO/.tools/bin/weed)")
	fs.StringVar(&c.nodeDir, "node", "", "`folder` of the npm test tools with Node and tus-js-client (default REPO/.tools/node)")
	fs.StringVar(&c.nginx, "nginx", "", "nginx `binary` (default: nginx on PATH, else /usr/sbin/nginx)")
	fs.StringVar(&c.out, "out", "", "also write the markdown summary to this `file`")
	fs.StringVar(&c.profile, "profile", "full", "`full` (make cluster) or test (make cluster-check: shorter load, bounded to 240 s)")
	fs.DurationVar(&c.duration, "duration", 0, "load `time` (at most 30s; default the profile's: 20s, test 12s)")
	fs.DurationVar(&c.killAfter, "kill-after", 0, "SIGKILL a node this long after the load starts (default the profile's: 8s, test 5s)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work folder (logs, configs) and print its path")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	p, ok := profiles[c.profile]
	if !ok {
		return c, fmt.Errorf("unknown -profile %q (full or test)", c.profile)
	}
	if c.duration == 0 {
		c.duration = p.duration
	}
	if c.killAfter == 0 {
		c.killAfter = p.killAfter
	}
	c.bound = p.bound
	if c.duration > 30*time.Second || c.killAfter < time.Second || c.killAfter+3*time.Second > c.duration {
		return c, fmt.Errorf("want -duration ≤ 30s and 1s ≤ -kill-after ≤ -duration - 3s (the volume server is killed after the node)")
	}
	root, err := filepath.Abs(c.repo)
	if err != nil {
		return c, err
	}
	c.repo = root
	if c.weed == "" {
		c.weed = filepath.Join(root, ".tools", "bin", "weed")
	}
	if _, err := os.Stat(c.weed); err != nil {
		return c, fmt.Errorf("%s missing: run `make tools` first", c.weed)
	}
	if c.nodeDir == "" {
		c.nodeDir = filepath.Join(root, ".tools", "node")
	}
	c.nginx, err = findNginx(c.nginx)
	return c, err
}

// runChecks runs the cross-node checks, the load with its kills and the
// SIGTERM during an upload, each only while the run's time bound holds.
func runChecks(ctx context.Context, c config, cl *cluster, rep *report) {
	t := time.Now()
	crossNode(ctx, cl, rep)
	logf("cross-node checks took %.1fs", time.Since(t).Seconds())
	if ctx.Err() == nil {
		t = time.Now()
		if err := underLoad(ctx, c, cl, rep); err != nil {
			rep.fail("load", "node killed under load", err.Error())
		}
		logf("load, kills and wipe took %.1fs", time.Since(t).Seconds())
	}
	if ctx.Err() == nil {
		t = time.Now()
		tusJS(ctx, c, cl, rep)
		logf("tus-js-client uploads took %.1fs", time.Since(t).Seconds())
	}
	if ctx.Err() == nil { // quotas, on nodes of the check's own
		t = time.Now()
		for _, r := range quotacheck.Run(ctx, cl.quotaSetup()) {
			rep.add("quotas", r.Name, r.OK, r.Detail)
		}
		logf("quota check took %.1fs", time.Since(t).Seconds())
	}
	if ctx.Err() == nil {
		t = time.Now()
		gracefulShutdown(ctx, cl, rep)
		logf("SIGTERM during an upload took %.1fs", time.Since(t).Seconds())
	}
	if ctx.Err() != nil {
		rep.fail("time", "whole run bounded", "stopped: "+ctx.Err().Error())
	}
}

// noteLogErrors notes the error lines each node and each SeaweedFS process
// logged.
func noteLogErrors(cl *cluster, rep *report) {
	for _, n := range cl.nodes {
		if lines := errorLines(n); len(lines) > 0 {
			rep.note("logs", n.name+" logged errors", fmt.Sprintf("%d, the first: %s", len(lines), clip([]byte(lines[0]))))
		}
	}
	weedErrors := cl.weed.errorLines()
	for _, name := range slices.Sorted(maps.Keys(weedErrors)) {
		lines := weedErrors[name]
		rep.note("logs", "SeaweedFS "+name+" logged errors", fmt.Sprintf("%d, the first: %s", len(lines), clip([]byte(lines[0]))))
	}
}
