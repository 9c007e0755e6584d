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
	modules    int      // how many modules the rule looked at; 0 means the main module only
}

func main() {
	reportOnlySizes := flag.Bool("report-only-sizes", false,
		"print package and function size violations without failing on them")
	flag.Parse()
	os.Exit(run(os.Stdout, *reportOnlySizes))
}

// run checks every rule on the repository around the working directory (the
// main module's rules on the main module, the size rules on every module,
// each module's own rules on it), writes the report to w and returns the
// exit code.
func run(w io.Writer, reportOnlySizes bool) int {
	mods, err := loadModules()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	g := mods[0]
	var results []result
	for _, r := range depRules {
		results = append(results, r.check(g))
	}
	for _, r := range importRules {
		results = append(results, r.check(g))
	}
	results = append(results, checkAllowed(g, allowRules), g.checkDocFile())
	for _, r := range moduleRules {
		results = append(results, r.check(mods))
	}
	sizes := []result{inEvery(mods, packageSizes)}
	for _, r := range sizeRules {
		sizes = append(sizes, r.check(g))
	}
	for _, r := range append(sizes, inEvery(mods, funcLengths)) {
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
	if r.modules > 0 {
		return plural(r.checked, unit) + " checked in " + plural(r.modules, "module")
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
