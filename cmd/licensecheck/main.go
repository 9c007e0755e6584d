package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	cfg := config{}
	flag.StringVar(&cfg.root, "root", "", "repository root (default: git rev-parse --show-toplevel)")
	flag.StringVar(&cfg.ship, "ship", "./cmd/mcpblob", "package pattern of the root module whose build graph is shipped")
	flag.StringVar(&cfg.toolsDir, "tools", ".tools/bin", "folder of the installed tool binaries, relative to -root")
	flag.StringVar(&cfg.makefile, "makefile", "Makefile", "Makefile naming the tools it installs, relative to -root")
	flag.StringVar(&cfg.npmLock, "npm-lock", "core/server/testdata/node/package-lock.json", "npm lock file, relative to -root")
	flag.StringVar(&cfg.npmInstalled, "npm-installed", ".tools/node", "folder the lock file is installed into, relative to -root")
	flag.StringVar(&cfg.allowFile, "allow", "cmd/licensecheck/allow.txt", "allow-list file, relative to -root")
	flag.Parse()
	os.Exit(run(os.Stdout, os.Stderr, cfg))
}

// run checks every module and npm package cfg names, prints the table to w
// and returns the exit code: 0 all acceptable, 1 a failure, 2 the graph or
// a licence could not be read.
func run(w, errw io.Writer, cfg config) int {
	if err := cfg.resolve(); err != nil {
		fmt.Fprintln(errw, "licensecheck:", err)
		return 2
	}
	allow, err := readAllowList(cfg.allowFile)
	if err != nil {
		fmt.Fprintln(errw, "licensecheck:", err)
		return 2
	}
	rows, err := collect(cfg)
	if err != nil {
		fmt.Fprintln(errw, "licensecheck:", err)
		return 2
	}
	for i := range rows {
		allow.apply(&rows[i])
	}
	if report(w, rows, allow) > 0 {
		return 1
	}
	return 0
}
