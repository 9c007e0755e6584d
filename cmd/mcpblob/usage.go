package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/quota"
)

func init() {
	commands["usage"] = command{"usage [--rebuild] [store flags]: print each principal's usage, or recompute it from the stored objects", runUsage}
}

// runUsage prints the usage records of the store that --data or
// --s3-endpoint (and MCPBLOB_* as for serve) names; with --rebuild it
// first recomputes them from the objects (quota.Rebuild), for a store no
// server writes to meanwhile: after a crash left a count over the truth.
func runUsage(ctx context.Context, args []string, getenv func(string) string) int {
	fs := flag.NewFlagSet("mcpblob usage", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	rebuild := fs.Bool("rebuild", false, "recompute every principal's usage from the stored objects (no server may write meanwhile)")
	var c Config
	fs.StringVar(&c.Data, "data", "./data", "folder of the embedded local store")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", "", "S3 endpoint URL; selects the S3 store (credentials in MCPBLOB_S3_ACCESS_KEY, MCPBLOB_S3_SECRET_KEY)")
	fs.StringVar(&c.S3Bucket, "s3-bucket", "mcpblob", "S3 bucket")
	fs.StringVar(&c.S3Region, "s3-region", "us-east-1", "S3 region")
	rest, err := parseAnywhere(fs, args)
	if err != nil || len(rest) > 0 || fillFromEnv(fs, getenv) != nil {
		fmt.Fprintln(os.Stderr, "usage: mcpblob usage [--rebuild] [--data DIR | --s3-endpoint URL --s3-bucket NAME]")
		return exitUsage
	}
	c.S3AccessKey, c.S3SecretKey = getenv("MCPBLOB_S3_ACCESS_KEY"), getenv("MCPBLOB_S3_SECRET_KEY")
	if err := printUsage(ctx, c, *rebuild, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "mcpblob usage: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// fillFromEnv sets every flag of fs not given on the command line from
// its MCPBLOB_* variable, as serve does.
func fillFromEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && !given[f.Name] && err == nil {
			err = f.Value.Set(v)
		}
	})
	return err
}

// printUsage opens the store, rebuilds its usage when asked, and prints
// one line per namespace: its name, bytes, objects and bytes in flight.
func printUsage(ctx context.Context, c Config, rebuild bool, w io.Writer) error {
	b, _, err := openBackend(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer b.Close()
	rec := storage.RecorderOf(b)
	if rec == nil {
		return fmt.Errorf("the store keeps no records")
	}
	l := &quota.Ledger{Records: rec}
	if rebuild {
		if _, err := quota.Rebuild(ctx, b, l); err != nil {
			return err
		}
	}
	all, err := l.All(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(all))
	for ns := range all {
		names = append(names, ns)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "namespace\tbytes\tobjects\tin-flight-bytes")
	for _, ns := range names {
		u := all[ns]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\n", ns, u.Bytes, u.Objects, u.HeldBytes)
	}
	return nil
}
