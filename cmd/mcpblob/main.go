// Command mcpblob is the mcpblob server and its command-line client.
//
// See the README for the subcommands; `mcpblob help` lists them.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(ctx, os.Args[1:], os.Getenv))
}

// Exit codes, in the manner of caddy's sigtrap constants.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func run(ctx context.Context, args []string, getenv func(string) string) int {
	if len(args) == 0 {
		usage(os.Stderr)
		return exitUsage
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "mcpblob: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		return exitUsage
	}
	return cmd.run(ctx, args[1:], getenv)
}
