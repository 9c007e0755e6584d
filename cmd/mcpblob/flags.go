package main

import (
	"flag"
	"strings"
)

// parseAnywhere parses args with fs, taking flags wherever they stand
// (`put FILE KEY --server URL`, as the usage lines show them, works as well
// as `put --server URL FILE KEY`), and returns the other arguments in their
// order. `--` ends the flags: everything after it is an argument, so a key
// that starts with a dash can still be named. The standard flag package
// stops at the first argument; here each flag (with its value, unless it is
// a boolean or written name=value) is handed to fs on its own.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for len(args) > 0 {
		arg := args[0]
		switch {
		case arg == "--":
			return append(positional, args[1:]...), nil
		case len(arg) < 2 || arg[0] != '-':
			positional = append(positional, arg)
			args = args[1:]
			continue
		}
		n := flagWidth(fs, arg, len(args))
		if err := fs.Parse(args[:n]); err != nil {
			return nil, err
		}
		args = args[n:]
	}
	return positional, nil
}

// flagWidth is how many arguments the flag arg takes up: 2 when its value
// is the next argument, else 1. An unknown flag counts 1 and fs.Parse
// reports it.
func flagWidth(fs *flag.FlagSet, arg string, left int) int {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") || left < 2 {
		return 1
	}
	f := fs.Lookup(name)
	if f == nil {
		return 1
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return 1
	}
	return 2
}
