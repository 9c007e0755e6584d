// Command smallreq measures what one small MCP request costs the server,
// before and after a change: core/server's BenchmarkSmallRequest (a 4 KiB
// resources/read and a tools/call stat_blob, both protocol eras, through the
// whole handler, no sockets) built at a base commit and from the working
// tree, the two binaries run in alternation -count times so machine noise
// falls on both alike. It prints a markdown table of medians (allocs/op,
// B/op, ns/op with min–max) and, with -markdown, rewrites the "smallreq"
// section of that file (bench-compare keeps it).
//
//	cd bench && go run ./smallreq -base 10002a2 -markdown RESULTS.md
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpblob/mcpblob/loadtest/rig/mdsection"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "smallreq:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("smallreq", flag.ContinueOnError)
	base := fs.String("base", "10002a2", "git `ref` to compare the working tree with")
	count := fs.Int("count", 6, "runs of each binary, alternating")
	benchtime := fs.String("benchtime", "3000x", "-test.benchtime of each run")
	markdown := fs.String("markdown", "", "rewrite the smallreq section of this markdown `file`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := output("", "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	bins, cleanup, err := build(root, *base)
	defer cleanup()
	if err != nil {
		return err
	}
	runs := map[string][]sample{}
	for i := range *count {
		for _, b := range bins {
			fmt.Fprintf(os.Stderr, "run %d/%d: %s\n", i+1, *count, b.label)
			got, err := b.bench(*benchtime)
			if err != nil {
				return err
			}
			runs[b.label] = append(runs[b.label], got...)
		}
	}
	table := render(*base, *count, bins[0].label, bins[1].label, runs)
	cost, err := telemetryCost(root, *count)
	if err != nil {
		return err
	}
	table += cost
	fmt.Fprint(stdout, table)
	if *markdown != "" {
		return mdsection.Rewrite(*markdown, "smallreq", table)
	}
	return nil
}
