// Command loadrun is the load-test runner behind `make loadtest` and
// `make loadtest-smoke`, built on vegeta as a library (loadtest/rig/load).
// It builds mcpblob, seeds a temporary local store with known blobs, starts
// `mcpblob serve` on a free loopback port, probes which features the server
// has, runs the bounded profile against it (integrity first, with the
// sha256 of every blob checked; then the load scenarios at constant arrival
// rates), writes a text summary and an HTML latency plot per scenario to
// loadtest/results/, stops the server, and exits non-zero when any
// threshold failed.
//
//	cd loadtest && go run ./loadrun -profile full    # ≤ 60 s of load
//	cd loadtest && go run ./loadrun -profile smoke   # ≤ 20 s in all
//
// With -target it runs one scenario against a server already running
// (bench/profiles/p6-measure.sh):
//
//	go run ./loadrun -target http://127.0.0.1:18611 -scenario mixed -rate 1800 -duration 20s
//
// Scenarios for features the server does not have (resources/stream, /d/
// ranges, multipart and data-URI uploads) are not scheduled; the runner
// says so and why. All traffic goes to 127.0.0.1 only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/load"
	"github.com/mcpblob/mcpblob/loadtest/rig/probe"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
)

// job is one scenario of a profile.
type job struct {
	name string
	p    load.Params
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadrun:", err)
	}
	os.Exit(code)
}

type options struct {
	profile, repo, results, target, scenario string
	cpuProfile                               string
	fromHEAD                                 bool
	one                                      load.Params
}

func parse(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("loadrun", flag.ContinueOnError)
	fs.StringVar(&o.profile, "profile", "full", "`profile`: full (≤ 60 s of load) or smoke (≤ 20 s in all)")
	fs.StringVar(&o.repo, "repo", "..", "mcpblob repository `root`")
	fs.BoolVar(&o.fromHEAD, "head", false, "build mcpblob from the committed HEAD instead of the working tree")
	fs.StringVar(&o.results, "results", "", "`folder` for the summaries and plots (default REPO/loadtest/results)")
	fs.StringVar(&o.target, "target", "", "run one -scenario against this running server's base `URL` instead of a profile")
	fs.StringVar(&o.scenario, "scenario", "mixed", "with -target: the `scenario` to run")
	fs.IntVar(&o.one.Rate, "rate", 0, "with -target: requests per `second` (default the scenario's)")
	fs.DurationVar(&o.one.Duration, "duration", 0, "with -target: load `time` (default the scenario's)")
	fs.DurationVar(&o.one.P99, "p99", 0, "with -target: p99 `bound` (default the scenario's)")
	fs.StringVar(&o.one.Key, "key", "", "with -target: blob `key` (default the scenario's)")
	fs.Int64Var(&o.one.Size, "size", 0, "with -target: blob `bytes` (default the scenario's)")
	fs.Uint64Var(&o.one.Workers, "workers", 0, "with -target: initial concurrent `requests` (default the scenario's)")
	fs.Uint64Var(&o.one.MaxWorkers, "max-workers", 0, "with -target: most concurrent `requests` (default the scenario's)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the load generator's CPU profile to `file`")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(o.repo)
	if err != nil {
		return nil, err
	}
	o.repo = root
	if o.results == "" {
		o.results = filepath.Join(root, "loadtest", "results")
	}
	return o, os.MkdirAll(o.results, 0o755)
}

func run(ctx context.Context, args []string) (int, error) {
	o, err := parse(args)
	if err != nil {
		return 2, err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return 2, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 2, err
		}
		defer pprof.StopCPUProfile()
	}
	if o.target != "" {
		return runOne(ctx, o)
	}
	start := time.Now()
	work, err := os.MkdirTemp("", "mcpblob-loadrun-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(work)
	srv, base, blobs, err := startServer(o, work)
	if err != nil {
		return 2, err
	}
	defer srv.Stop()
	feat, err := probe.Probe(ctx, base)
	if err != nil {
		return 2, fmt.Errorf("probe: %w", err)
	}
	jobs, skipped, err := profileJobs(o.profile, base, blobs, feat)
	if err != nil {
		return 2, err
	}
	if len(skipped) > 0 {
		// Every feature exists: a server that lacks one is a regression,
		// never a scenario quietly left out.
		return 1, fmt.Errorf("the server lacks features the scenarios need:\n  %s", strings.Join(skipped, "\n  "))
	}
	failed := 0
	for _, j := range jobs {
		ok, err := runJob(ctx, o, j)
		if err != nil {
			return 1, err
		}
		if !ok {
			failed++
		}
		if srv.Exited() {
			return 1, fmt.Errorf("mcpblob exited during %s:\n%s", j.name, srv.Logs())
		}
	}
	fmt.Printf("loadrun: profile %s: %d scenarios, %d failed, %.1fs; summaries and plots in %s\n",
		o.profile, len(jobs), failed, time.Since(start).Seconds(), o.results)
	if failed > 0 {
		return 1, nil
	}
	return 0, nil
}

// startServer builds mcpblob, seeds the profile's blobs into a store under
// work and serves it on a free loopback port.
func startServer(o *options, work string) (*proc.Proc, string, []load.Blob, error) {
	bin := filepath.Join(work, "mcpblob")
	src := o.repo
	if o.fromHEAD {
		src = filepath.Join(work, "src")
		if err := proc.ExportHEAD(o.repo, src); err != nil {
			return nil, "", nil, err
		}
	}
	if err := proc.GoBuild(src, bin, "./cmd/mcpblob"); err != nil {
		return nil, "", nil, err
	}
	want := []seed.Blob{{Key: "bench-4KiB", Size: 4 << 10}, {Key: "bench-1MiB", Size: 1 << 20}}
	if o.profile == "full" {
		want = append(want, seed.Blob{Key: "bench-64MiB", Size: 64 << 20})
	}
	data := filepath.Join(work, "data")
	sums, err := seed.Store(data, want...)
	if err != nil {
		return nil, "", nil, err
	}
	var blobs []load.Blob
	for _, b := range want {
		blobs = append(blobs, load.Blob{Key: b.Key, Size: b.Size, SHA256: sums[b.Key]})
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, "", nil, err
	}
	base := "http://" + addr
	srv, err := proc.Start("mcpblob", base+"/readyz", bin, []string{"serve", "--listen", addr, "--data", data})
	return srv, base, blobs, err
}

// profileJobs is the profile's scenarios with their parameters, and the
// scenarios left out because the server lacks their feature.
func profileJobs(profile, base string, blobs []load.Blob, feat probe.Features) ([]job, []string, error) {
	p := func(q load.Params) load.Params { q.Base = base; return q }
	large := load.Params{Key: "bench-64MiB", Size: 64 << 20}
	switch profile {
	case "smoke":
		return []job{
			{"integrity", p(load.Params{Blobs: blobs, PerBlob: 1})},
			{"mixed", p(load.Params{Rate: 100, Duration: 5 * time.Second, Workers: 10, MaxWorkers: 50})},
		}, nil, nil
	case "full":
	default:
		return nil, nil, fmt.Errorf("unknown -profile %q", profile)
	}
	jobs := []job{
		{"integrity", p(load.Params{Blobs: blobs, PerBlob: 2})},
		{"small-reads", p(load.Params{Rate: 200, Duration: 8 * time.Second})},
		{"tools-list", p(load.Params{Rate: 200, Duration: 5 * time.Second})},
		{"large-reads", p(load.Params{Key: large.Key, Size: large.Size, Rate: 2, Duration: 8 * time.Second})},
	}
	// Feature scenarios get 3 s each; the mixed run gets what is left of
	// the 60 s budget (never under 8 s).
	var skipped []string
	nfeat := 0
	add := func(ok bool, j job, what string) {
		if ok {
			jobs = append(jobs, j)
			nfeat++
		} else {
			skipped = append(skipped, fmt.Sprintf("%s: %s", j.name, what))
		}
	}
	add(feat.ResourceStream,
		job{"stream", p(load.Params{Key: large.Key, Size: large.Size, Rate: 2, Duration: 3 * time.Second})},
		"the server does not declare resources.stream")
	add(feat.ControlAPI,
		job{"download-range", p(load.Params{Key: large.Key, Size: large.Size, Rate: 50, Duration: 3 * time.Second})},
		"GET /v1/blobs does not answer 200")
	add(feat.Uploads,
		job{"upload-multipart", p(load.Params{Rate: 10, Duration: 3 * time.Second})},
		"a multipart upload to an endpoint minted by POST /v1/uploads is not stored")
	add(feat.UploadFile,
		job{"upload-datauri", p(load.Params{Rate: 10, Duration: 3 * time.Second})},
		"tools/list has no upload_file")
	mixed := time.Duration(max(8, 20-3*nfeat)) * time.Second
	jobs = append(jobs, job{"mixed", p(load.Params{Rate: 300, Duration: mixed})})
	return jobs, skipped, nil
}

// runJob runs one scenario, writes its summary and plot and prints the
// summary; it says whether its thresholds held.
func runJob(ctx context.Context, o *options, j job) (bool, error) {
	// Start each scenario on a settled disk: the writeback an earlier one
	// (or whatever ran before make) left behind would otherwise land on
	// this one's fsyncs (upload latency thresholds).
	syscall.Sync()
	t0 := time.Now()
	s, err := load.New(ctx, j.name, j.p)
	if err != nil {
		return false, err
	}
	rep := load.Run(ctx, s)
	if err := rep.Write(o.results, o.profile+"-"+j.name); err != nil {
		return false, err
	}
	status := "ok"
	if !rep.OK() {
		status = "FAILED: " + strings.Join(rep.FailedThresholds(), "; ")
	}
	fmt.Printf("loadrun: %-17s %5.1fs  %s\n%s", j.name, time.Since(t0).Seconds(), status, indent(rep.Text()))
	return rep.OK(), nil
}

// runOne runs -scenario against -target.
func runOne(ctx context.Context, o *options) (int, error) {
	p := o.one
	o.profile = "target"
	p.Base = strings.TrimSuffix(o.target, "/")
	ok, err := runJob(ctx, o, job{o.scenario, p})
	if err != nil {
		return 2, err
	}
	if !ok {
		return 1, nil
	}
	return 0, nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}
