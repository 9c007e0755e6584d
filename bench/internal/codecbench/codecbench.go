// Package codecbench measures mcpblob's base64 codec against emmansun/base64
// v0.9.0, encoding/base64 and copy() at 64 KiB, 1 MiB and 64 MiB (target P1,
// docs/design.md) and renders the result as a markdown table. bench/codec
// prints it and bench/compare puts it into RESULTS.md.
//
// The codec runs at the tier it picks on this machine (codec.Tier) and,
// interleaved with it, at each lower kernel tier the machine has (on an
// AVX-512 VBMI CPU: "avx2", selected in-process through the asm registry), so
// that one run shows a row group per tier. emmansun picks its own code
// (AVX2 on both kinds of CPU). GODEBUG=cpu.avx512f=off measures an AVX2-only
// CPU's view: the codec starts at "avx2".
//
// Each figure is the median of Runs timed runs of at least MinTime each; the
// implementations take turns within every run, so drift (turbo, a noisy
// neighbour) hits them alike. Throughput counts decoded (raw) bytes for both
// directions.
package codecbench

import (
	"bytes"
	stdb64 "encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	emb64 "github.com/emmansun/base64"
	"github.com/klauspost/cpuid/v2"

	"github.com/mcpblob/mcpblob/asm"
	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/loadtest/rig/mdsection"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

type impl struct {
	name   string
	encode func(dst, src []byte)
	decode func(dst, src []byte) (int, error)
}

var impls = []impl{
	{"ours", codec.StdEncoding.Encode, codec.StdEncoding.Decode},
	{"emmansun", emb64.StdEncoding.Encode, emb64.StdEncoding.Decode},
	{"stdlib", stdb64.StdEncoding.Encode, stdb64.StdEncoding.Decode},
	{"copy", func(dst, src []byte) { copy(dst, src) }, func(dst, src []byte) (int, error) { return copy(dst, src), nil }},
}

type size struct {
	name string
	n    int
	// minimum ratio ours/emmansun required by target P1 (docs/design.md)
	vsEmmansun float64
}

var sizes = []size{
	{"64 KiB", 64 << 10, 1.5},
	{"1 MiB", 1 << 20, 1.5},
	{"64 MiB", 64 << 20, 1.0},
}

const vsStdlib = 10.0 // ours/encoding/base64 at every size

// Results holds the medians: MBps[size][op][impl] in MB/s, op 0 = encode,
// 1 = decode, with ours at Tier; Lower[i].MBps[size][op] is ours at the
// lower tier Lower[i].Tier, measured in the same runs.
type Results struct {
	MBps    [][2][]float64
	Tier    string
	Lower   []TierResults
	Runs    int
	MinTime time.Duration
}

// TierResults is ours at one lower kernel tier: MBps[size][op] in MB/s.
type TierResults struct {
	Tier string
	MBps [][2]float64
}

// target is the ours/emmansun ratio required of tier at size s: the sizes'
// targets for AVX-512 VBMI, at least parity for the other tiers (issue 29:
// ≥ 1.0× emmansun at every size on an AVX2-only CPU).
func target(tier string, s size) float64 {
	if tier == codec.TierAVX512VBMI {
		return s.vsEmmansun
	}
	return 1.0
}

// lowerTiers are the codec's kernel tiers below the one it uses: the asm
// registry's base64 tiers after it, without emmansun (the reference).
func lowerTiers() []string {
	var out []string
	below := false
	for _, t := range asm.Impls("base64") {
		switch {
		case t == codec.Tier():
			below = true
		case below && t != codec.TierEmmansun:
			out = append(out, t)
		}
	}
	return out
}

// Ratio is one P1 comparison: ours over a reference for a size and direction.
type Ratio struct {
	Size, Op   string
	VsEmmansun float64
	VsStdlib   float64
	Target     float64 // required VsEmmansun
}

// Ratios lists ours/emmansun and ours/stdlib for every size and direction,
// with ours at the codec's own tier.
func (r Results) Ratios() []Ratio {
	var out []Ratio
	for si, s := range sizes {
		for op, opName := range []string{"encode", "decode"} {
			v := r.MBps[si][op]
			out = append(out, Ratio{s.name, opName, v[0] / v[1], v[0] / v[2], target(r.Tier, s)})
		}
	}
	return out
}

// StdlibTarget is the required ours/encoding/base64 ratio at every size.
const StdlibTarget = vsStdlib

// Measure runs the comparison; progress goes to log.
func Measure(runs int, minTime time.Duration, log io.Writer) (Results, error) {
	if runs < 1 || minTime <= 0 {
		return Results{}, errors.New("codecbench: runs and minTime must be positive")
	}
	res := Results{Tier: codec.Tier(), Runs: runs, MinTime: minTime}
	lower := lowerTiers()
	for _, t := range lower {
		res.Lower = append(res.Lower, TierResults{Tier: t})
	}
	for _, s := range sizes {
		r, l, err := measureSize(s.n, runs, minTime, lower)
		if err != nil {
			return Results{}, err
		}
		res.MBps = append(res.MBps, r)
		for i := range lower {
			res.Lower[i].MBps = append(res.Lower[i].MBps, l[i])
		}
		fmt.Fprintf(log, "codec: %s done\n", s.name)
	}
	return res, nil
}

// measureSize measures every implementation, and ours at each lower tier,
// at n bytes: the medians of runs interleaved runs.
func measureSize(n, runs int, minTime time.Duration, lower []string) (mb [2][]float64, low [][2]float64, err error) {
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*131 + i>>9)
	}
	enc := make([]byte, stdb64.StdEncoding.EncodedLen(n))
	stdb64.StdEncoding.Encode(enc, src)
	dst := make([]byte, len(enc))
	if err := verify(src, enc, dst, lower); err != nil {
		return mb, nil, err
	}
	samples := [2][][]float64{make([][]float64, len(impls)), make([][]float64, len(impls))}
	lowSamples := make([][2][]float64, len(lower))
	for range runs {
		for ii, im := range impls {
			samples[0][ii] = append(samples[0][ii], measure(n, minTime, func() { im.encode(dst, src) }))
			din := enc
			if im.name == "copy" {
				din = src // copy moves the raw bytes either way
			}
			samples[1][ii] = append(samples[1][ii], measure(n, minTime, func() { im.decode(dst, din) }))
			if ii != 0 {
				continue
			}
			for ti, t := range lower { // ours at the lower tiers, next to ours
				withTier(t, func() {
					lowSamples[ti][0] = append(lowSamples[ti][0], measure(n, minTime, func() { im.encode(dst, src) }))
					lowSamples[ti][1] = append(lowSamples[ti][1], measure(n, minTime, func() { im.decode(dst, enc) }))
				})
			}
		}
	}
	for op := range 2 {
		for ii := range impls {
			mb[op] = append(mb[op], median(samples[op][ii]))
		}
	}
	for ti := range lower {
		low = append(low, [2]float64{median(lowSamples[ti][0]), median(lowSamples[ti][1])})
	}
	return mb, low, nil
}

// withTier runs f with the codec's base64 kernels at tier.
func withTier(tier string, f func()) {
	if !asm.Select("base64", tier) {
		panic("bug: codecbench: tier " + tier + " not available")
	}
	defer asm.Reset("base64")
	f()
}

// Render is the markdown table of r.
func (r Results) Render() string { return render(r) }

// RewriteSection replaces the codec section of the markdown file with
// table, or appends the section when the file has none (creating the file
// when missing).
func RewriteSection(file, table string) error { return mdsection.Rewrite(file, "codec", table) }

// Median is the median of v.
func Median(v []float64) float64 { return median(v) }

// Sizes names the measured sizes, in order.
func Sizes() []string {
	var s []string
	for _, z := range sizes {
		s = append(s, z.name)
	}
	return s
}

// Impls names the implementations, in order.
func Impls() []string {
	var s []string
	for _, im := range impls {
		s = append(s, im.name)
	}
	return s
}

// verify checks every implementation, and ours at each lower tier, once
// before timing it.
func verify(src, enc, dst []byte, lower []string) error {
	check := func(im impl) error {
		im.encode(dst, src)
		if !bytes.Equal(dst[:len(enc)], enc) {
			return fmt.Errorf("%s: encode mismatch", im.name)
		}
		n, err := im.decode(dst, enc)
		if err != nil || !bytes.Equal(dst[:n], src) {
			return fmt.Errorf("%s: decode mismatch (%v)", im.name, err)
		}
		return nil
	}
	for _, im := range impls[:3] {
		if err := check(im); err != nil {
			return err
		}
	}
	for _, t := range lower {
		var err error
		withTier(t, func() { err = check(impls[0]) })
		if err != nil {
			return fmt.Errorf("tier %s: %w", t, err)
		}
	}
	return nil
}

// measure runs f until minTime has passed and returns MB/s for n bytes per call.
func measure(n int, minTime time.Duration, f func()) float64 {
	runtime.GC()
	f() // warm caches and the branch predictor
	iters := 1
	for {
		start := time.Now()
		for range iters {
			f()
		}
		el := time.Since(start)
		if el >= minTime {
			return float64(n) * float64(iters) / el.Seconds() / 1e6
		}
		// Aim a little past minTime.
		next := int(float64(iters) * 1.2 * float64(minTime) / float64(max(el, time.Microsecond)))
		iters = max(iters*2, min(next, iters*100))
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func render(r Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- CPU: %s (cpuid: %s), %d logical CPUs\n", sysinfo.CPUModel(), cpuid.CPU.BrandName, runtime.NumCPU())
	fmt.Fprintf(&b, "- Go %s, %s/%s, GOAMD64=%s\n", strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH, goamd64())
	fmt.Fprintf(&b, "- tiers: codec %q, asm base64 %q, asm features %v; lower tiers measured in the same runs: %q\n", r.Tier, asm.Base64Tier(), asm.Features(), lowerNames(r.Lower))
	fmt.Fprintf(&b, "- method: median of %d runs of ≥ %v each, implementations (and ours at each tier) interleaved; MB/s of decoded bytes (10^6 B/s); measured %s\n\n",
		r.Runs, r.MinTime, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("| tier | size | op | ours MB/s | emmansun MB/s | encoding/base64 MB/s | copy() MB/s | ours/emmansun | ours/stdlib | ours/copy | target | |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
	renderGroup(&b, r.Tier, r.MBps, func(si, op int) float64 { return r.MBps[si][op][0] })
	for _, l := range r.Lower {
		renderGroup(&b, l.Tier, r.MBps, func(si, op int) float64 { return l.MBps[si][op] })
	}
	return b.String()
}

func lowerNames(l []TierResults) []string {
	names := []string{}
	for _, t := range l {
		names = append(names, t.Tier)
	}
	return names
}

// renderGroup writes the rows of one tier: ours(si, op) against the
// references of results.
func renderGroup(b *strings.Builder, tier string, results [][2][]float64, ours func(si, op int) float64) {
	for si, s := range sizes {
		for op, opName := range []string{"encode", "decode"} {
			r := results[si][op]
			o, emm, std, cp := ours(si, op), r[1], r[2], r[3]
			ve, vs, want := o/emm, o/std, target(tier, s)
			verdict := "met"
			var missed []string
			if ve < want {
				missed = append(missed, fmt.Sprintf("emmansun %.2f× < %.1f×", ve, want))
			}
			if vs < vsStdlib {
				missed = append(missed, fmt.Sprintf("stdlib %.1f× < %.0f×", vs, vsStdlib))
			}
			if len(missed) > 0 {
				verdict = "**missed**: " + strings.Join(missed, ", ")
			}
			fmt.Fprintf(b, "| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.2f× | %.1f× | %.2f× | ≥ %.1f× emmansun, ≥ %.0f× stdlib | %s |\n",
				tier, s.name, opName, o, emm, std, cp, ve, vs, o/cp, want, vsStdlib, verdict)
		}
	}
}

// goamd64 returns the GOAMD64 level the binary was built for.
func goamd64() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOAMD64" {
				return s.Value
			}
		}
	}
	if v := os.Getenv("GOAMD64"); v != "" {
		return v
	}
	return "v1 (default)"
}
