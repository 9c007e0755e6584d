package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// sample is one benchmark line.
type sample struct {
	name              string // e.g. "read4KiB/2025-11-25"
	ns, bytes, allocs float64
}

// parse reads "BenchmarkSmallRequest/<case>-N  iters  X ns/op ... Y B/op  Z allocs/op" lines.
func parse(out string) ([]sample, error) { return parseWith(out, "BenchmarkSmallRequest/") }

// parseWith reads the benchmark lines whose name starts with prefix; a
// sample's name is the rest, without the -GOMAXPROCS suffix.
func parseWith(out, prefix string) ([]sample, error) {
	var got []sample
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], prefix) {
			continue
		}
		name := strings.TrimPrefix(f[0], prefix)
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		s := sample{name: name}
		for i := 1; i+1 < len(f); i++ {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				s.ns = v
			case "B/op":
				s.bytes = v
			case "allocs/op":
				s.allocs = v
			}
		}
		got = append(got, s)
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("no %s lines in:\n%s", prefix, out)
	}
	return got, nil
}

// render is the markdown table: one row per case, base → working tree.
func render(base string, count int, baseLabel, headLabel string, runs map[string][]sample) string {
	var b strings.Builder
	b.WriteString("## Small requests: server cost per request, before and after a change\n\n")
	b.WriteString("Written by `make bench-smallreq` (bench/smallreq); bench-compare keeps this section as it is.\n")
	fmt.Fprintf(&b, "`go run ./smallreq -base %s -count %d`: core/server BenchmarkSmallRequest built at %s and from the working tree, run alternately %d times each; medians, ns/op with min–max.\n\n", base, count, base, count)
	b.WriteString("| request | allocs/op | B/op | ns/op | ns/op ratio |\n|---|---|---|---|---|\n")
	for _, name := range caseNames(runs[headLabel]) {
		o, n := pick(runs[baseLabel], name), pick(runs[headLabel], name)
		if len(o) == 0 || len(n) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.0f → %.0f | %.0f → %.0f | %s → %s | %.2f× |\n", name,
			med(o, allocs), med(n, allocs), med(o, bytesOp), med(n, bytesOp),
			spread(o), spread(n), med(n, nsOp)/med(o, nsOp))
	}
	return b.String()
}

func caseNames(s []sample) []string {
	var names []string
	for _, x := range s {
		if !slices.Contains(names, x.name) {
			names = append(names, x.name)
		}
	}
	return names
}

func pick(s []sample, name string) []sample {
	var out []sample
	for _, x := range s {
		if x.name == name {
			out = append(out, x)
		}
	}
	return out
}

func allocs(s sample) float64  { return s.allocs }
func bytesOp(s sample) float64 { return s.bytes }
func nsOp(s sample) float64    { return s.ns }

func values(s []sample, f func(sample) float64) []float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	return v
}

func med(s []sample, f func(sample) float64) float64 {
	v := values(s, f)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func spread(s []sample) string {
	v := values(s, nsOp)
	return fmt.Sprintf("%.1f µs (%.1f–%.1f)", med(s, nsOp)/1000, v[0]/1000, v[len(v)-1]/1000)
}
