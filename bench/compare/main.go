// Command compare is the side-by-side benchmark behind `make bench-compare`.
// It builds and starts every system on loopback — mcpblob, the go-sdk and
// mcp-go peer servers (bench/peers), nginx serving the same bytes with
// sendfile, SeaweedFS, and a raw loopback TCP ceiling — runs the same workloads
// against each in alternation, and rewrites RESULTS.md and the SVG charts
// beside it.
//
//	cd bench && go run ./compare -out RESULTS.md -charts charts
//
// Every target (docs/design.md) becomes a pair.Target: mcpblob against a
// reference, run i of both sides measured side by side, at least three
// runs, so the report gives each ratio's min, median and max; plus bounds
// (RSS growth, p99, errors). One renderer writes them all (render.go): the
// targets table, a chart per target and the miss lines, which each
// workload computes from its figures (targets.go, p3.go, p6report.go). P1 is the codec
// (internal/codecbench), P2 resources/read at 4 KiB to 256 MiB, P3
// resources/stream against nginx with the page-cache residency of both
// copies (p3.go, residency.go), P4 and P5 uploads (later.go), P6 small
// requests at saturation under wrk, each server pinned to one CPU, against
// the fasthttp floor, nginx and go-sdk, with CPU per request at a fixed rate
// as information (p6.go, p6rig.go, p6sat.go, p6report.go). P3–P5 run only
// once the server has the feature (probed at start). P11 and P12, tus
// uploads against PUT /v1/blobs and tusd and the resume after a SIGKILL,
// run on servers of their own (package tusb) and write a section of their
// own, as the gateway targets G1–G3 do (package gw).
//
// Throughput is raw blob bytes per second (10^6 B/s; MCP systems move 4/3
// as many bytes on the wire, as base64). Peak RSS is the serving process's
// VmHWM during a run (reset before each run through /proc/PID/clear_refs,
// sampled VmRSS as a fallback); growth is the peak minus its resident size
// when idle after start.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/scale"
	"github.com/mcpblob/mcpblob/bench/compare/tusb"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/codecbench"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/probe"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

type config struct {
	out, charts, repo string
	weed, tusd        string
	quick             bool
	skipCodec, skipP6 bool
	skipG, skipTus    bool
	worktree          bool
	only              string // one target alone (runOnly)
	budget            time.Duration
	scaleBudget       time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// readSize is one P2 size.
type readSize struct {
	name string
	n    int64
}

func (r readSize) key() string { return "bench-" + strings.ReplaceAll(r.name, " ", "") }

var readSizes = []readSize{{"4 KiB", 4 << 10}, {"1 MiB", 1 << 20}, {"64 MiB", 64 << 20}, {"256 MiB", 256 << 20}}

func run(ctx context.Context, args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	start := time.Now()
	rep := &report{started: start.UTC(), quick: cfg.quick, worktree: cfg.worktree}
	rep.fillEnv(cfg.repo, cfg.weed)
	rep.cpuStart = sysinfo.ReadCPUTimes()

	work, err := os.MkdirTemp("", "mcpblob-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bins, err := buildAll(&cfg, work)
	if err != nil {
		return err
	}
	if cfg.only != "" {
		return runOnly(ctx, &cfg, work, bins, rep, start)
	}

	sizes := readSizes
	if cfg.quick {
		// The 256 MiB read holds the P2 target: keep it, drop 64 MiB.
		sizes = []readSize{readSizes[0], readSizes[1], readSizes[3]}
	}
	data, files, sums, err := seedBlobs(work, sizes)
	if err != nil {
		return err
	}
	systems, feat, err := startSystems(ctx, work, bins, data, files, rep)
	defer stopSystems(systems)
	if err != nil {
		return err
	}
	rep.features = feat
	rep.systems = systems

	// Integrity once per system, on the 1 MiB blob, before any timing.
	checkIntegrity(ctx, systems, readSizes[1], sums[readSizes[1].key()], rep)

	// P2: resources/read, all systems in alternation.
	p2(ctx, &cfg, systems, sizes, rep, start)

	// P6: small requests at saturation (wrk), and CPU per request at a fixed
	// rate as information, on P6's own servers pinned to one CPU.
	if !cfg.skipP6 {
		if time.Since(start) > cfg.budget {
			rep.budgetHit = true
		} else {
			runP6(ctx, &cfg, work, bins, rep)
		}
	}
	if err := runCodec(&cfg, rep); err != nil {
		return err
	}

	// P3, P4, P5: only when the server has the feature. Last, because their
	// gigabytes of writes leave the disk busy with writeback for a while.
	later(ctx, &cfg, work, bins, systems, feat, rep, start)

	// G1–G3: the gateway in front of a go-sdk upstream, on servers of their
	// own (package gw); their section of RESULTS.md is written beside the others.
	if !cfg.skipG {
		runG(ctx, &cfg, work, bins, rep)
	}
	// P11–P12: tus uploads against PUT and tusd, and the resume after a
	// kill, on servers of their own (package tusb), a section of their own.
	if !cfg.skipTus {
		rep.tus = tusb.Run(ctx, &tusb.Options{Quick: cfg.quick, Bins: bins}, work)
	}

	// P8–P10 (package scale) under their own budget, since P10's seeding
	// alone takes minutes; the report renders every target the same way.
	opt := &scale.Options{Budget: cfg.scaleBudget, Quick: cfg.quick}
	rep.targets = append(rep.targets, scale.Targets(ctx, opt, work, bins, peersOf(systems), time.Now())...)
	return finish(&cfg, rep, start)
}

// parseConfig reads the flags and fills in the repository root and the
// SeaweedFS binary.
func parseConfig(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.StringVar(&cfg.out, "out", "RESULTS.md", "markdown `file` to rewrite")
	fs.StringVar(&cfg.charts, "charts", "charts", "`folder` for the SVG charts")
	fs.StringVar(&cfg.weed, "weed", "", "SeaweedFS `binary` (default REPO/.tools/bin/weed)")
	fs.StringVar(&cfg.tusd, "tusd", "", "tusd `binary`, P11's reference (default REPO/.tools/bin/tusd)")
	fs.StringVar(&cfg.repo, "repo", "..", "mcpblob repository `root`")
	fs.BoolVar(&cfg.quick, "quick", false, "fewer repetitions, no 256 MiB (a harness check, not a result)")
	fs.BoolVar(&cfg.skipCodec, "skip-codec", false, "keep the codec section as it is")
	fs.BoolVar(&cfg.skipP6, "skip-p6", false, "skip P6 (wrk at saturation, vegeta at a fixed rate)")
	fs.BoolVar(&cfg.skipG, "skip-g", false, "skip the gateway targets G1–G3 (their section of RESULTS.md is kept)")
	fs.BoolVar(&cfg.skipTus, "skip-tus", false, "skip the resumable-upload targets P11–P12 (their section of RESULTS.md is kept)")
	fs.BoolVar(&cfg.worktree, "worktree", false, "build mcpblob from the working tree instead of the committed HEAD")
	fs.StringVar(&cfg.only, "only", "", "run this `target` alone (P6, P9, G for G1–G3, or P11 for P11–P12) and write only it")
	fs.DurationVar(&cfg.budget, "budget", 13*time.Minute, "stop starting new measurements (P1–P6) after this long")
	fs.DurationVar(&cfg.scaleBudget, "scale-budget", 6*time.Minute, "stop starting new P8–P10 runs after this long from their start")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	root, err := filepath.Abs(cfg.repo)
	if err != nil {
		return cfg, err
	}
	cfg.repo = root
	if cfg.weed == "" {
		cfg.weed = filepath.Join(root, ".tools", "bin", "weed")
	}
	if cfg.tusd == "" {
		cfg.tusd = filepath.Join(root, ".tools", "bin", "tusd")
	}
	return cfg, nil
}

// buildAll builds mcpblob and the peers into work first, so compile time
// never lands in a measurement. mcpblob is built from the committed HEAD
// (git archive) unless -worktree, so the result belongs to the commit in
// the report even while the tree is being edited.
func buildAll(cfg *config, work string) (map[string]string, error) {
	measure.Logf("building mcpblob (HEAD) and the peers")
	root, src := cfg.repo, cfg.repo
	if !cfg.worktree {
		src = filepath.Join(work, "src")
		if err := proc.ExportHEAD(root, src); err != nil {
			return nil, err
		}
	}
	bins := map[string]string{"weed": cfg.weed, "tusd": cfg.tusd}
	for _, b := range []struct{ name, dir, pkg string }{
		{"mcpblob", src, "./cmd/mcpblob"},
		{"gosdk", filepath.Join(root, "bench"), "./peers/gosdk"},
		{"mcpgo", filepath.Join(root, "bench"), "./peers/mcpgo"},
		{"fasthttpfile", filepath.Join(root, "bench"), "./peers/fasthttpfile"},
		{"testas", filepath.Join(root, "cmd", "mcpblob-testas"), "."}, // P6's OAuth row
	} {
		bins[b.name] = filepath.Join(work, b.name)
		if err := proc.GoBuild(b.dir, bins[b.name], b.pkg); err != nil {
			return nil, err
		}
	}
	return bins, nil
}

// seedBlobs writes the P2 blobs as files (for the peers) and into a local
// store (for mcpblob), and returns both folders and the sha256 by key.
func seedBlobs(work string, sizes []readSize) (data, files string, sums map[string]string, err error) {
	measure.Logf("seeding blobs")
	files = filepath.Join(work, "files")
	os.MkdirAll(files, 0o755)
	var blobs []seed.Blob
	sums = map[string]string{}
	for _, s := range sizes {
		blobs = append(blobs, seed.Blob{Key: s.key(), Size: s.n})
		if sums[s.key()], err = seed.File(filepath.Join(files, s.key()), s.n); err != nil {
			return "", "", nil, err
		}
	}
	data = filepath.Join(work, "data")
	_, err = seed.Store(data, blobs...)
	return data, files, sums, err
}

// stopSystems stops every system that started.
func stopSystems(systems []*system) {
	for _, s := range systems {
		switch {
		case s.stop != nil:
			s.stop()
		case s.proc != nil:
			s.proc.Stop()
		}
		if s.rawTCP != nil {
			s.rawTCP.close()
		}
	}
}

// runCodec measures P1, the codec, unless -skip-codec.
func runCodec(cfg *config, rep *report) error {
	if cfg.skipCodec {
		return nil
	}
	measure.Logf("codec (P1)")
	runs, mt := 3, 200*time.Millisecond
	if cfg.quick {
		runs, mt = 1, 50*time.Millisecond
	}
	res, err := codecbench.Measure(runs, mt, os.Stderr)
	if err != nil {
		return err
	}
	rep.codec = &res
	return nil
}

// finish writes the report and the charts.
func finish(cfg *config, rep *report, start time.Time) error {
	rep.elapsed = time.Since(start)
	rep.steal = sysinfo.StealSince(rep.cpuStart)
	measure.Logf("writing %s and %s/", cfg.out, cfg.charts)
	if err := rep.write(cfg.out, cfg.skipCodec); err != nil {
		return err
	}
	if err := rep.writeCharts(cfg.charts); err != nil {
		return err
	}
	measure.Logf("done in %v", rep.elapsed.Round(time.Second))
	return nil
}

// runOnly runs one target alone (-only) and writes the report with it: P6
// on its own pinned servers, or P9 on its own SeaweedFS and mcpblob. G
// (G1–G3) renews only the gateway section of the report and its charts,
// P11 (P11 and P12) only the tus section.
func runOnly(ctx context.Context, cfg *config, work string, bins map[string]string, rep *report, start time.Time) error {
	switch cfg.only {
	case "G":
		runG(ctx, cfg, work, bins, rep)
		return writeG(cfg, rep)
	case "P11", "P12":
		rep.tus = tusb.Run(ctx, &tusb.Options{Quick: cfg.quick, Bins: bins}, work)
		return writeTus(cfg, rep)
	case "P6":
		runP6(ctx, cfg, work, bins, rep)
	case "P9":
		t, err := scale.P9Alone(ctx, &scale.Options{Budget: cfg.budget, Quick: cfg.quick}, work, bins, start)
		if err != nil {
			return err
		}
		rep.targets = append(rep.targets, t)
	default:
		return fmt.Errorf("-only %q: only P6, P9, G and P11 (with P12) run alone", cfg.only)
	}
	rep.elapsed = time.Since(start)
	rep.steal = sysinfo.StealSince(rep.cpuStart)
	if err := rep.writeOnly(cfg.out, cfg.only); err != nil {
		return err
	}
	return rep.writeCharts(cfg.charts)
}

// startSystems starts mcpblob, the peers, nginx and the raw TCP ceiling.
func startSystems(ctx context.Context, work string, bins map[string]string, data, files string, rep *report) ([]*system, probe.Features, error) {
	var systems []*system
	var feat probe.Features
	start := func(name, bin string, args ...string) (*proc.Proc, string, error) {
		addr, err := proc.FreeAddr()
		if err != nil {
			return nil, "", err
		}
		p, err := proc.Start(name, "http://"+addr+"/readyz", bin, append(args, "--listen", addr))
		return p, "http://" + addr, err
	}
	p, base, err := start("mcpblob", bins["mcpblob"], "serve", "--data", data)
	if err != nil {
		return nil, feat, err
	}
	systems = append(systems, &system{name: "mcpblob", note: "`mcpblob serve`, local store", proc: p, base: base})
	if feat, err = probe.Probe(ctx, base); err != nil {
		return nil, feat, fmt.Errorf("probe mcpblob: %w", err)
	}
	for _, peer := range []struct{ name, bin, note string }{
		{"go-sdk", "gosdk", "bench/peers/gosdk on modelcontextprotocol/go-sdk"},
		{"mcp-go", "mcpgo", "bench/peers/mcpgo on mark3labs/mcp-go"},
	} {
		p, base, err := start(peer.name, bins[peer.bin], "-dir", files)
		if err != nil {
			return nil, feat, err
		}
		systems = append(systems, &system{name: peer.name, note: peer.note, proc: p, base: base, slow: true})
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, feat, err
	}
	if ng, err := startNginx(filepath.Join(work, "nginx"), files, addr); err != nil {
		rep.nginxErr = err.Error()
		measure.Logf("nginx: %v", err)
	} else {
		systems = append(systems, &system{name: "nginx", note: "nginx sendfile of the raw bytes (ceiling for a file server)", proc: ng, base: "http://" + addr, plain: true})
	}
	if w, peer, err := startSeaweedFS(ctx, bins["weed"], work, files); err != nil {
		rep.s3Err = err.Error()
		measure.Logf("SeaweedFS: %v", err)
	} else {
		systems = append(systems, &system{name: "SeaweedFS", note: "SeaweedFS (one node: `weed server -s3`) GET of the same object by presigned URL (an S3 store's download path)",
			proc: w.Proc, stop: w.Stop, s3: peer, plain: true})
	}
	raw, err := startRawTCP()
	if err != nil {
		return nil, feat, err
	}
	systems = append(systems, &system{name: "raw TCP", note: "loopback TCP, 1 MiB writes, in the harness (physical ceiling)", rawTCP: raw})

	for _, s := range systems {
		if s.proc != nil && !s.plain {
			s.mcp = mcpc.New(s.base + "/mcp")
			if err := s.mcp.Init(ctx, nil); err != nil {
				return nil, feat, fmt.Errorf("%s: %w", s.name, err)
			}
		}
		// Warm up with one small transfer, then take the idle baseline.
		buf := make([]byte, 256<<10)
		if _, _, err := s.fetch(ctx, readSizes[0].key(), readSizes[0].n, buf); err != nil {
			return nil, feat, fmt.Errorf("%s: warm-up read: %w", s.name, err)
		}
		if s.pid() != 0 {
			time.Sleep(100 * time.Millisecond)
			if m, err := sysinfo.ReadMem(s.pid()); err == nil {
				s.baseline = m.RSS
			}
		}
	}
	return systems, feat, nil
}

// checkIntegrity reads the 1 MiB blob from every MCP system, decodes it and
// compares its sha256 with the seeded one.
func checkIntegrity(ctx context.Context, systems []*system, s readSize, want string, rep *report) {
	for _, sys := range systems {
		if sys.mcp == nil {
			continue
		}
		n, got, err := sys.mcp.ReadSHA256(ctx, "blob:///"+s.key())
		switch {
		case err != nil:
			rep.integrity = append(rep.integrity, fmt.Sprintf("%s: %v", sys.name, err))
		case n != int(s.n) || got != want:
			rep.integrity = append(rep.integrity, fmt.Sprintf("%s: %d bytes, sha256 %s, want %s", sys.name, n, got, want))
		default:
			rep.integrityOK = append(rep.integrityOK, sys.name)
		}
	}
}

// p2 runs resources/read at every size against every system in
// alternation: each repetition visits all systems, starting one further
// along each time.
func p2(ctx context.Context, cfg *config, systems []*system, sizes []readSize, rep *report, start time.Time) {
	buf := make([]byte, 256<<10)
	for _, sz := range sizes {
		reps := func(s *system) int {
			switch {
			case cfg.quick && s.slow && sz.n >= 64<<20:
				return 1
			case cfg.quick:
				return 2
			case s.slow && sz.n >= 64<<20:
				return 3 // ~2–10 s and up to ~3 GiB per read
			default:
				return 5
			}
		}
		minTime := 400 * time.Millisecond
		if sz.n >= 64<<20 {
			minTime = 0 // one transfer is the run
		}
		samples := make([][]sample, len(systems))
		maxReps := 0
		for _, s := range systems {
			maxReps = max(maxReps, reps(s))
		}
		measure.Logf("P2 resources/read %s", sz.name)
		for r := range maxReps {
			for i := range systems {
				si := (i + r) % len(systems)
				s := systems[si]
				if r >= reps(s) || ctx.Err() != nil {
					continue
				}
				if time.Since(start) > cfg.budget {
					rep.budgetHit = true
					continue
				}
				smp := readRun(ctx, s, sz.key(), sz.n, minTime, buf)
				if smp.err != nil {
					measure.Logf("  %s %s: %v", s.name, sz.name, smp.err)
				}
				samples[si] = append(samples[si], smp)
			}
		}
		rep.p2 = append(rep.p2, summarize("P2", "resources/read "+sz.name, sz.n, systems, samples))
	}
}

// summarize turns the samples of one workload into a table.
func summarize(id, title string, size int64, systems []*system, samples [][]sample) *table {
	t := &table{id: id, title: title, size: size}
	for i, s := range systems {
		c := cell{system: s.name, pid: s.pid()}
		var mbps []float64
		var ttfb []time.Duration
		for _, smp := range samples[i] {
			c.perRun = append(c.perRun, smp.mbps)
			if smp.err != nil {
				c.errs = append(c.errs, smp.err.Error())
				continue
			}
			mbps = append(mbps, smp.mbps)
			ttfb = append(ttfb, smp.ttfb)
			c.peak = max(c.peak, smp.peak)
		}
		c.runs = len(mbps)
		c.mbps = measure.Median(mbps)
		c.ttfb = measure.MedianDur(ttfb)
		if c.peak > 0 && s.baseline > 0 {
			c.growth = max(0, c.peak-s.baseline)
		}
		if len(samples[i]) == 0 {
			c.errs = append(c.errs, "not run")
		}
		t.cells = append(t.cells, c)
	}
	return t
}

// peersOf describes the running peers for the scale targets.
func peersOf(systems []*system) []scale.Peer {
	var peers []scale.Peer
	for _, s := range systems {
		peers = append(peers, scale.Peer{Name: s.name, Base: s.base, PID: s.pid(), Baseline: s.baseline})
	}
	return peers
}
