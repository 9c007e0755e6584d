package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// result is the outcome of one rule.
type result struct {
	rule       string
	checked    int      // how many packages (or files) the rule looked at
	unit       string   // what checked counts: "package" unless set
	skip       string   // why nothing was checked; "" when the rule ran
	violations []string // "file:line: message"
	exempt     []string // functions allowed over the limit, with the reason
	reportOnly bool     // violations are printed but do not fail the run
}

func main() {
	reportOnlySizes := flag.Bool("report-only-sizes", false,
		"print package and function size violations without failing on them")
	flag.Parse()
	os.Exit(run(os.Stdout, *reportOnlySizes))
}

// run checks every rule on the module around the working directory, writes
// the report to w and returns the exit code.
func run(w io.Writer, reportOnlySizes bool) int {
	g, err := load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var results []result
	for _, r := range depRules {
		results = append(results, r.check(g))
	}
	for _, r := range importRules {
		results = append(results, r.check(g))
	}
	results = append(results, checkAllowed(g, allowRules), g.checkDocFile())
	sizes := []result{packageSizes(g)}
	for _, r := range sizeRules {
		sizes = append(sizes, r.check(g))
	}
	for _, r := range append(sizes, funcLengths(g)) {
		r.reportOnly = reportOnlySizes
		results = append(results, r)
	}
	if report(w, results) > 0 {
		return 1
	}
	return 0
}

// checkDocFile holds archDoc, read from the module root, against the tables.
func (g *graph) checkDocFile() result {
	doc, err := os.ReadFile(filepath.Join(g.root, archDoc))
	if err != nil {
		return result{rule: archDoc + " states the rules depcheck checks", violations: []string{err.Error()}}
	}
	return checkDoc(doc, allowRules, depRules, importRules)
}

// report prints one line per rule followed by its violations and
// exemptions, then the verdict, and returns the number of failing violations.
func report(w io.Writer, results []result) int {
	failed := 0
	for _, r := range results {
		switch {
		case r.skip != "":
			fmt.Fprintf(w, "depcheck: skip  %s (%s)\n", r.rule, r.skip)
		case len(r.violations) == 0:
			fmt.Fprintf(w, "depcheck: ok    %s [%s]\n", r.rule, r.count())
		case r.reportOnly:
			fmt.Fprintf(w, "depcheck: WARN  %s [%s]: %s (not failing: -report-only-sizes)\n",
				r.rule, r.count(), plural(len(r.violations), "violation"))
		default:
			fmt.Fprintf(w, "depcheck: FAIL  %s [%s]: %s\n", r.rule, r.count(), plural(len(r.violations), "violation"))
			failed += len(r.violations)
		}
		for _, v := range r.violations {
			fmt.Fprintf(w, "\t%s\n", v)
		}
		for _, e := range r.exempt {
			fmt.Fprintf(w, "\texempt: %s\n", e)
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "depcheck: %s\n", plural(failed, "violation"))
	} else {
		fmt.Fprintln(w, "depcheck: ok")
	}
	return failed
}

// count is "N packages checked" (or files).
func (r result) count() string {
	unit := r.unit
	if unit == "" {
		unit = "package"
	}
	return plural(r.checked, unit) + " checked"
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
