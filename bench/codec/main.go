// Command codec measures mcpblob's base64 codec against emmansun/base64
// v0.9.0, encoding/base64 and copy() at 64 KiB, 1 MiB and 64 MiB, in one
// run on one machine, and prints one markdown table with the ratios and the
// P1 targets of docs/design.md (met or missed).
//
//	cd bench && go run ./codec                   # print the table
//	cd bench && go run ./codec -markdown RESULTS.md
//
// With -markdown the table replaces the section between the lines
// "<!-- codec:begin -->" and "<!-- codec:end -->" of the file (appended,
// with the markers, when they are missing), so other sections survive.
// `make bench-compare` runs the same measurement as part of the whole report.
// For a publishable comparison also run the micro-benchmarks with -count=10
// through benchstat (docs/design.md, "How performance is measured").
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/codecbench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/codec:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("codec", flag.ContinueOnError)
	markdown := fs.String("markdown", "", "rewrite the codec section of this markdown `file`")
	out := fs.String("out", "", "same as -markdown")
	runs := fs.Int("runs", 5, "timed runs per measurement (the median is reported)")
	minTime := fs.Duration("mintime", 200*time.Millisecond, "minimum duration of one timed run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *markdown == "" {
		*markdown = *out
	}
	res, err := codecbench.Measure(*runs, *minTime, os.Stderr)
	if err != nil {
		return err
	}
	table := res.Render()
	fmt.Fprint(stdout, table)
	if *markdown != "" {
		return codecbench.RewriteSection(*markdown, table)
	}
	return nil
}
