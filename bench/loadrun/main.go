// Command loadrun is the k6 load-test runner behind `make loadtest` and
// `make loadtest-smoke`. It builds mcpblob, seeds a temporary local store
// with known blobs, starts `mcpblob serve` on a free loopback port, probes
// which features the server has, runs the bounded k6 profile against it
// (integrity first, with bodies checked; then the load scripts with bodies
// discarded), writes each k6 summary as JSON to loadtest/results/, stops the
// server, and exits non-zero when any threshold failed.
//
//	cd bench && go run ./loadrun -profile full    # ≤ 60 s of load
//	cd bench && go run ./loadrun -profile smoke   # ≤ 20 s in all
//
// Scripts for features the server does not have yet (resources/stream,
// /d/{token} ranges, multipart and data-URI uploads) are not scheduled; the
// runner says so and why. All traffic goes to 127.0.0.1 only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/k6"
	"github.com/mcpblob/mcpblob/bench/internal/probe"
	"github.com/mcpblob/mcpblob/bench/internal/proc"
	"github.com/mcpblob/mcpblob/bench/internal/seed"
)

type job struct {
	script string
	env    map[string]string
	limit  time.Duration // hard stop for the k6 process
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

func run(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("loadrun", flag.ContinueOnError)
	profile := fs.String("profile", "full", "`profile`: full (≤ 60 s of load) or smoke (≤ 20 s in all)")
	repo := fs.String("repo", "..", "mcpblob repository `root`")
	k6bin := fs.String("k6", "", "k6 `binary` (default REPO/.tools/bin/k6)")
	fromHEAD := fs.Bool("head", false, "build mcpblob from the committed HEAD instead of the working tree")
	results := fs.String("results", "", "`folder` for the k6 summaries (default REPO/loadtest/results)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		return 2, err
	}
	if *k6bin == "" {
		*k6bin = filepath.Join(root, ".tools", "bin", "k6")
	}
	if _, err := os.Stat(*k6bin); err != nil {
		return 2, fmt.Errorf("%s missing: run `make tools` first", *k6bin)
	}
	if *results == "" {
		*results = filepath.Join(root, "loadtest", "results")
	}
	if err := os.MkdirAll(*results, 0o755); err != nil {
		return 2, err
	}
	scripts := filepath.Join(root, "loadtest")
	start := time.Now()

	work, err := os.MkdirTemp("", "mcpblob-loadrun-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "mcpblob")
	src := root
	if *fromHEAD {
		src = filepath.Join(work, "src")
		if err := proc.ExportHEAD(root, src); err != nil {
			return 2, err
		}
	}
	if err := proc.GoBuild(src, bin, "./cmd/mcpblob"); err != nil {
		return 2, err
	}

	blobs := []seed.Blob{{Key: "bench-4KiB", Size: 4 << 10}, {Key: "bench-1MiB", Size: 1 << 20}}
	if *profile == "full" {
		blobs = append(blobs, seed.Blob{Key: "bench-64MiB", Size: 64 << 20})
	}
	data := filepath.Join(work, "data")
	sums, err := seed.Store(data, blobs...)
	if err != nil {
		return 2, err
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		return 2, err
	}
	base := "http://" + addr
	srv, err := proc.Start("mcpblob", base+"/readyz", bin, []string{"serve", "--listen", addr, "--data", data})
	if err != nil {
		return 2, err
	}
	defer srv.Stop()

	feat, err := probe.Probe(ctx, base)
	if err != nil {
		return 2, fmt.Errorf("probe: %w", err)
	}
	var integrity []string
	for _, b := range blobs {
		integrity = append(integrity, fmt.Sprintf("%s:%d:%s", b.Key, b.Size, sums[b.Key]))
	}
	common := map[string]string{"BASE_URL": base}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range common {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	var jobs []job
	var skipped []string
	switch *profile {
	case "smoke":
		jobs = []job{
			{"integrity.js", with("BLOBS", strings.Join(integrity, ","), "ITERATIONS", "1"), 15 * time.Second},
			{"mixed.js", with("RATE", "100", "DURATION", "5s", "VUS", "10", "MAX_VUS", "50"), 15 * time.Second},
		}
	case "full":
		jobs = []job{
			{"integrity.js", with("BLOBS", strings.Join(integrity, ","), "ITERATIONS", "2"), 30 * time.Second},
			{"small-reads.js", with("RATE", "200", "DURATION", "8s"), 20 * time.Second},
			{"tools-list.js", with("RATE", "200", "DURATION", "5s"), 20 * time.Second},
			{"large-reads.js", with("KEY", "bench-64MiB", "SIZE", fmt.Sprint(64<<20), "RATE", "2", "DURATION", "8s"), 30 * time.Second},
		}
		// Feature scripts get 3 s each; the mixed run gets what is left of
		// the 60 s budget (never under 8 s).
		nfeat := 0
		add := func(ok bool, issue int, j job, what string) {
			if ok {
				jobs = append(jobs, j)
				nfeat++
			} else {
				skipped = append(skipped, fmt.Sprintf("%s: not available yet (issue %d): %s", j.script, issue, what))
			}
		}
		add(feat.ResourceStream, probe.IssueResourceStream,
			job{"stream.js", with("KEY", "bench-64MiB", "SIZE", fmt.Sprint(64<<20), "RATE", "2", "DURATION", "3s"), 20 * time.Second},
			"the server does not declare resources.stream")
		add(feat.ControlAPI, probe.IssueControlAPI,
			job{"download-range.js", with("KEY", "bench-64MiB", "SIZE", fmt.Sprint(64<<20), "RATE", "50", "DURATION", "3s"), 20 * time.Second},
			"GET /v1/blobs does not answer 200")
		add(feat.Uploads, probe.IssueUploads,
			job{"upload-multipart.js", with("RATE", "10", "DURATION", "3s"), 20 * time.Second},
			"a multipart upload to an endpoint minted by POST /v1/uploads is not stored")
		add(feat.UploadFile, probe.IssueUploadFile,
			job{"upload-datauri.js", with("RATE", "10", "DURATION", "3s"), 20 * time.Second},
			"tools/list has no upload_file")
		mixed := max(8, 20-3*nfeat)
		jobs = append(jobs, job{"mixed.js", with("RATE", "300", "DURATION", fmt.Sprintf("%ds", mixed)), time.Duration(mixed+15) * time.Second})
	default:
		return 2, fmt.Errorf("unknown -profile %q", *profile)
	}
	for _, s := range skipped {
		fmt.Println("loadrun: skip", s)
	}

	failed := 0
	for _, j := range jobs {
		name := strings.TrimSuffix(j.script, ".js")
		out := filepath.Join(*results, *profile+"-"+name+".json")
		// Start each script on a settled disk: the writeback an earlier
		// script (or whatever ran before make) left behind would otherwise
		// land on this one's fsyncs (upload latency thresholds).
		syscall.Sync()
		t0 := time.Now()
		sum, log, ok, err := k6.Run(ctx, *k6bin, filepath.Join(scripts, j.script), out, j.env, j.limit)
		if err != nil {
			return 1, err
		}
		status := "ok"
		if !ok {
			status = "FAILED: " + strings.Join(sum.FailedThresholds(), "; ")
			failed++
		}
		fmt.Printf("loadrun: %-20s %5.1fs  %s\n%s", j.script, time.Since(t0).Seconds(), status, indent(log))
		if srv.Exited() {
			return 1, fmt.Errorf("mcpblob exited during %s:\n%s", j.script, srv.Logs())
		}
	}
	fmt.Printf("loadrun: profile %s: %d scripts, %d failed, %.1fs; summaries in %s\n",
		*profile, len(jobs), failed, time.Since(start).Seconds(), *results)
	if failed > 0 {
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
