package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// report prints the table, the problems of each row that fails or is
// excused, stale allow-list entries and a summary line, and returns the
// number of failing rows.
func report(w io.Writer, rows []row, allow *allowList) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tMODULE\tVERSION\tLICENCE\tUSE\tVIA")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.status(), r.name, r.version, r.licence, r.use, strings.Join(r.via, ","))
	}
	tw.Flush()
	failed, uses := 0, map[use]int{}
	for _, r := range rows {
		uses[r.use]++
		switch r.status() {
		case "FAIL":
			failed++
			fmt.Fprintf(w, "FAIL  %s@%s (%s): %s\n", r.name, r.version, r.use, strings.Join(r.problems, "; "))
		case "allow":
			fmt.Fprintf(w, "allow %s@%s: %s — allowed: %s\n", r.name, r.version, strings.Join(r.problems, "; "), r.allowed)
		}
	}
	stale := allow.unused()
	sort.Strings(stale)
	for _, n := range stale {
		fmt.Fprintf(w, "note: allow-list entry %s matches nothing checked\n", n)
	}
	fmt.Fprintf(w, "licensecheck: %d checked (%d shipped, %d test-only, %d tool): ", len(rows), uses[shipped], uses[testOnly], uses[toolOnly])
	if failed > 0 {
		fmt.Fprintf(w, "%d FAIL\n", failed)
	} else {
		fmt.Fprintln(w, "ok")
	}
	return failed
}
