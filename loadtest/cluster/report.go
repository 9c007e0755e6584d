package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// result is one line of the checks table.
type result struct {
	group, name, status, detail string // status: pass, FAIL or note
}

// report collects what the run found; markdown renders it.
type report struct {
	profile string
	setup   []string
	summary []result // the figures the summary table leads with (group unused)
	results []result
	load    []string // the load section's lines, already markdown
	elapsed time.Duration
}

// summaryOrder is every line of the summary, in order.
var summaryOrder = []string{
	"acknowledged uploads lost", "partial objects in the store", "If-None-Match: * exact across 3 S3 gateways",
	"single-use exact across 3 nodes", "upload endpoint single use across 3 nodes",
	"session end exact across 3 nodes", "reads surviving a lost volume server",
	"MRTR request_upload across 3 nodes", "2025-11-25 form elicitation through nginx",
	"tus-js-client: 1 GiB, node killed twice", "tus-js-client: parallelUploads (concatenation)", "SIGTERM during a 64 MiB upload",
}

// unmeasured adds a failing summary line for each property no check
// established (the run stopped before it, or a setup step failed).
func (r *report) unmeasured() {
	for _, name := range summaryOrder {
		if !slices.ContainsFunc(r.summary, func(res result) bool { return res.name == name }) {
			r.sum(name, false, "not measured: the run stopped before this check (see the rows below)")
		}
	}
}

// sum records one line of the summary table: a property, its figure and
// whether it holds. The checks that establish it are rows of the checks
// table too, so a failing line never passes the run by itself.
func (r *report) sum(name string, ok bool, figure string) {
	status := "pass"
	if !ok {
		status = "FAIL"
	}
	r.summary = append(r.summary, result{"", name, status, figure})
}

func (r *report) add(group, name string, ok bool, detail string) {
	status := "pass"
	if !ok {
		status = "FAIL"
	}
	r.results = append(r.results, result{group, name, status, detail})
	if !ok {
		logf("FAIL %s: %s: %s", group, name, detail)
	}
}

func (r *report) fail(group, name, detail string) { r.add(group, name, false, detail) }

// note records something observed that is not a pass/fail criterion (a
// documented per-node behaviour, say).
func (r *report) note(group, name, detail string) {
	r.results = append(r.results, result{group, name, "note", detail})
}

func (r *report) passed() bool {
	for _, res := range slices.Concat(r.summary, r.results) {
		if res.status == "FAIL" {
			return false
		}
	}
	return len(r.results) > 0
}

func (r *report) markdown() string {
	var b strings.Builder
	verdict := "**pass**"
	if !r.passed() {
		verdict = "**FAIL**"
	}
	fmt.Fprintf(&b, "# P7 cluster check: %s\n\n", verdict)
	fmt.Fprintf(&b, "P7: 3 nodes + nginx + SeaweedFS (3 volume servers, 2 copies of each volume), loopback: 0 errors; links and sessions work across nodes; a node killed mid-load loses no committed data, nor a volume server lost with its disk.\n\n")
	fmt.Fprintf(&b, "Machine: %s, %d cores, %s. Run took %.1f s, build included (`cd loadtest && go run ./cluster -profile %s`).\n\n",
		sysinfo.CPUModel(), sysinfo.Cores(), runtime.Version(), r.elapsed.Seconds(), r.profile)
	if len(r.summary) > 0 {
		b.WriteString("## Summary\n\n| property | result | figures |\n| --- | --- | --- |\n")
		rank := func(res result) int {
			if i := slices.Index(summaryOrder, res.name); i >= 0 {
				return i
			}
			return len(summaryOrder)
		}
		for _, res := range slices.SortedStableFunc(slices.Values(r.summary), func(a, b result) int { return rank(a) - rank(b) }) {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", res.name, res.status, strings.ReplaceAll(res.detail, "|", "\\|"))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Setup\n\n")
	for _, s := range r.setup {
		b.WriteString("- " + s + "\n")
	}
	b.WriteString("\n## Checks\n\n| area | check | result | detail |\n| --- | --- | --- | --- |\n")
	for _, res := range r.results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", res.group, res.name, res.status, strings.ReplaceAll(res.detail, "|", "\\|"))
	}
	if len(r.load) > 0 {
		b.WriteString("\n## Node killed under load\n\n")
		for _, l := range r.load {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
