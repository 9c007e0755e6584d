package main

import (
	"fmt"
	"strings"
)

// telemetryCost runs the per-request metrics and telemetry benchmarks of
// the working tree (core/metrics BenchmarkRequest: the counters and
// histograms one request updates; core/server/telemetry BenchmarkBeginEnd:
// request id, route, record and metrics, without the access log) count
// times and renders their medians with the range.
func telemetryCost(root string, count int) (string, error) {
	out, err := output(root, "go", "test", "-run", "^$", "-bench", "^(BenchmarkRequest|BenchmarkBeginEnd)$",
		"-benchmem", "-count", fmt.Sprint(count), "./core/metrics", "./core/server/telemetry")
	if err != nil {
		return "", err
	}
	s, err := parseWith(out, "Benchmark")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nPer-request telemetry in the working tree (`go test -bench` of core/metrics and core/server/telemetry, %d runs, 2 goroutines in parallel; the budget is 1 µs):\n\n", count)
	b.WriteString("| benchmark | allocs/op | B/op | ns/op |\n|---|---|---|---|\n")
	for _, name := range caseNames(s) {
		p := pick(s, name)
		v := values(p, nsOp)
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f ns (%.0f–%.0f) |\n", name, med(p, allocs), med(p, bytesOp), med(p, nsOp), v[0], v[len(v)-1])
	}
	return b.String(), nil
}
