package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/prober"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == prober.Arg {
		os.Exit(prober.Run(os.Args[2:])) // the /healthz probe's own process (monitor.go)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hardening: "+format+"\n", args...)
}

// run builds mcpblob, drives each target (the local store, then SeaweedFS
// when asked) and prints the report. ok is false when any check failed; err
// means the run itself could not be carried out.
func run(ctx context.Context, args []string) (ok bool, err error) {
	c, err := parseConfig(args)
	if err != nil {
		return false, err
	}
	start := time.Now()
	work, err := os.MkdirTemp("", "mcpblob-hardening-")
	if err != nil {
		return false, err
	}
	if c.keep {
		defer logf("work folder kept: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "mcpblob")
	logf("building mcpblob from %s", c.repo)
	if err := proc.GoBuild(c.repo, bin, "./cmd/mcpblob"); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.budget)
	defer cancel()

	rep := newReport(c)
	sec, err := newSecrets(work)
	if err != nil {
		return false, err
	}
	feats := detectFeatures(bin)
	rep.setup = append(rep.setup, feats.describe())
	if err := driveLocal(ctx, c, bin, work, sec, feats, rep); err != nil {
		return false, err
	}
	if c.runs("quota abuse") && ctx.Err() == nil {
		if err := driveQuota(bin, work, sec, rep); err != nil { // quota.go
			rep.fail("local quota abuse", "setup", "quota server", err.Error())
		}
	}
	if err := driveGateways(ctx, c, bin, work, sec, rep); err != nil {
		rep.fail("gateway", "setup", "gateway passes", err.Error())
	}
	if c.s3 && ctx.Err() == nil {
		if err := driveS3(ctx, c, bin, work, sec, feats, rep); err != nil {
			rep.fail("S3", "setup", "SeaweedFS pass", err.Error())
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		rep.fail("run", "budget", "whole run", fmt.Sprintf("stopped at the %s budget; some inputs were not tried", c.budget))
	}
	rep.elapsed = time.Since(start)
	return rep.finish()
}
