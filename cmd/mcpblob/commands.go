package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one mcpblob subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, getenv func(string) string) int
}

// commands maps subcommand names to their implementations; files add their
// own in init functions.
var commands = map[string]command{
	"serve":   {"run the server (MCP endpoint, byte plane, control API)", runServe},
	"cpu":     {"print the CPU features found and the SIMD tiers chosen", runCPU},
	"version": {"print the version", runVersion},
}

func init() {
	commands["help"] = command{"print this help", func(context.Context, []string, func(string) string) int { usage(os.Stdout); return exitOK }}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: mcpblob <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun `mcpblob <command> -h` for a command's flags.")
}
