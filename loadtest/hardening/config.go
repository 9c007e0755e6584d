package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/exhaust"
)

// config is the run's settings: a profile's defaults, then the flags.
type config struct {
	profile   string
	repo      string
	weed      string
	s3        bool
	out       string
	keep      bool
	seed      uint64
	budget    time.Duration
	workers   int
	caseLimit time.Duration
	flips     int // single-character forgeries per token

	slowConns    int           // connections of the slow-body storm
	slowHold     time.Duration // how long they trickle
	trickleEvery time.Duration // one body byte per connection this often
	connStorm    int           // connections of the connection storm
	connHold     time.Duration

	exhaustLimits exhaust.Limits // the limits the state exhaustion class drives to ten times
	exhaustFlags  bool           // start its server with them as flags (else: the defaults)
	capInits      int            // initializes with 3.7 MiB capabilities
	exhaustRSS    int64          // peak RSS allowed during the class, bytes
	exhaustHold   time.Duration  // how long held streams and calls stay open
	stormSessions int            // sessions of the state storm (0: none)
	stormStreams  int
	maxP99        time.Duration // the second principal's p99 during the state storm
	results       string        // write the state storm's figures into this RESULTS.md
	resultsLabel  string        // the build's name in that table (default: its commit)

	maxRSS         int64         // peak RSS allowed during storms, bytes
	maxHealthz     time.Duration // slowest /healthz answer allowed
	healthzEvery   time.Duration
	probeKeepAlive bool

	upstreamSize int64 // bytes of the hostile upstream's endless and huge answers

	s3Note string // why the S3 pass does not run, when it does not
	only   string // comma-separated parts of the names of what to run ("" = all)
}

// runs reports whether the part named name (a class, "storms", "state
// exhaustion", "state storm") is to run: -only empty, or one of its
// comma-separated parts is in name.
func (c config) runs(name string) bool {
	if c.only == "" {
		return true
	}
	for p := range strings.SplitSeq(c.only, ",") {
		if p = strings.TrimSpace(p); p != "" && strings.Contains(name, p) {
			return true
		}
	}
	return false
}

// profiles: full is `make hardening` (≤ ~6 minutes on 2 cores), smoke is
// the short run `make test` does (≤ ~65 s).
var profiles = map[string]config{
	"full": {budget: 360 * time.Second, s3: true, flips: 32, slowConns: 2000, slowHold: 40 * time.Second,
		trickleEvery: 5 * time.Second, connStorm: 2000, connHold: 10 * time.Second,
		exhaustLimits: exhaust.Defaults, capInits: 60, exhaustRSS: 256 << 20, exhaustHold: 3 * time.Second,
		stormSessions: 2000, stormStreams: 200, upstreamSize: 256 << 20},
	"smoke": {budget: 68 * time.Second, s3: false, flips: 8, slowConns: 200, slowHold: 6 * time.Second,
		trickleEvery: 2 * time.Second, connStorm: 300, connHold: 3 * time.Second,
		exhaustLimits: exhaust.Scaled, exhaustFlags: true, capInits: 16, exhaustRSS: 96 << 20, exhaustHold: 500 * time.Millisecond,
		upstreamSize: 16 << 20},
}

func parseConfig(args []string) (config, error) {
	profile := "full"
	for i, a := range args { // the profile sets the other flags' defaults
		if (a == "-profile" || a == "--profile") && i+1 < len(args) {
			profile = args[i+1]
		}
	}
	c, ok := profiles[profile]
	if !ok {
		return c, fmt.Errorf("unknown -profile %q (want full or smoke)", profile)
	}
	fs := flag.NewFlagSet("hardening", flag.ContinueOnError)
	fs.StringVar(&c.profile, "profile", profile, "`profile`: full (make hardening) or smoke (make test)")
	fs.StringVar(&c.repo, "repo", "..", "mcpblob repository `root` (the build under test is its working tree)")
	fs.StringVar(&c.weed, "weed", "", "SeaweedFS `binary` for the S3 pass (default REPO/.tools/bin/weed)")
	fs.BoolVar(&c.s3, "s3", c.s3, "also drive a second mcpblob on SeaweedFS (hostile inputs only, no storms)")
	fs.StringVar(&c.out, "out", "", "also write the markdown report to this `file`")
	fs.BoolVar(&c.keep, "keep", false, "keep the work folder (server logs, data) and print its path")
	fs.Uint64Var(&c.seed, "seed", 1, "`seed` of the generated inputs (same seed, same inputs)")
	fs.DurationVar(&c.budget, "budget", c.budget, "hard bound on the run after the build; what is left is reported as not tried")
	fs.IntVar(&c.workers, "workers", 4, "hostile inputs sent concurrently")
	fs.DurationVar(&c.caseLimit, "case-timeout", 5*time.Second, "bound on one hostile input's exchange")
	fs.IntVar(&c.flips, "flips", c.flips, "single-character forgeries of each real token")
	fs.IntVar(&c.slowConns, "slow-conns", c.slowConns, "connections of the slow-body storm")
	fs.DurationVar(&c.slowHold, "slow-hold", c.slowHold, "how long the slow-body storm trickles")
	fs.DurationVar(&c.trickleEvery, "trickle-every", c.trickleEvery, "one body byte per connection this often")
	fs.IntVar(&c.connStorm, "conn-storm", c.connStorm, "connections of the connection storm")
	fs.DurationVar(&c.connHold, "conn-hold", c.connHold, "how long the connection storm holds its connections")
	fs.Int64Var(&c.exhaustRSS, "exhaust-rss", c.exhaustRSS, "fail when the server's RSS reaches this many `bytes` during the state exhaustion class or the state storm")
	fs.IntVar(&c.capInits, "cap-inits", c.capInits, "initializes with 3.7 MiB capabilities in the state exhaustion class")
	fs.IntVar(&c.stormSessions, "storm-sessions", c.stormSessions, "sessions of the state storm (0: no state storm)")
	fs.IntVar(&c.stormStreams, "storm-streams", c.stormStreams, "notification streams of the state storm")
	fs.DurationVar(&c.maxP99, "max-p99", 50*time.Millisecond, "fail when the second principal's p99 latency during the state storm reaches this")
	fs.StringVar(&c.results, "results", "", "write the state storm's figures into the section \"statestorm\" of this markdown `file` (bench/RESULTS.md)")
	fs.StringVar(&c.resultsLabel, "results-label", "", "the build's `name` in the -results table (default: the commit, + when the tree has changes)")
	fs.Int64Var(&c.maxRSS, "max-rss", 512<<20, "fail when the server's RSS reaches this many `bytes` during a storm")
	fs.DurationVar(&c.maxHealthz, "max-healthz", 100*time.Millisecond, "fail when a /healthz answer takes this long or longer")
	fs.DurationVar(&c.healthzEvery, "healthz-every", 100*time.Millisecond, "time /healthz this often, throughout")
	fs.StringVar(&c.only, "only", "", "run only the classes and passes whose names contain one of these comma-separated `parts` (\"smuggling,state exhaustion\"); a partial run")
	fs.Int64Var(&c.upstreamSize, "upstream-size", c.upstreamSize, "`bytes` of the hostile upstream's endless and huge answers (the gateway pass)")
	fs.BoolVar(&c.probeKeepAlive, "probe-keepalive", false, "time /healthz on one kept-alive connection (default: a new connection per probe, as a health checker does)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	root, err := filepath.Abs(c.repo)
	if err != nil {
		return c, err
	}
	c.repo = root
	if c.weed == "" {
		c.weed = filepath.Join(root, ".tools", "bin", "weed")
	}
	if _, err := os.Stat(c.weed); err != nil && c.s3 {
		c.s3Note = fmt.Sprintf("no SeaweedFS at %s: the S3 pass was skipped (make tools builds it)", c.weed)
		c.s3 = false
	}
	if c.workers < 1 || c.slowConns < 0 || c.connStorm < 0 || c.trickleEvery <= 0 {
		return c, fmt.Errorf("want -workers ≥ 1, -slow-conns and -conn-storm ≥ 0, -trickle-every > 0")
	}
	return c, nil
}
