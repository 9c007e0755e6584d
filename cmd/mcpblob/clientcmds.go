package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpblob/mcpblob/core/client"
	"github.com/mcpblob/mcpblob/storage"
)

func init() {
	commands["put"] = command{"put FILE [KEY]: upload a file (KEY defaults to the file's name); run again to resume", runPut}
	commands["get"] = command{"get KEY [FILE]: download a blob, resuming an interrupted download", runGet}
	commands["ls"] = command{"ls [PREFIX]: list blobs", runLs}
	commands["rm"] = command{"rm KEY: delete a blob", runRm}
	commands["link"] = command{"link KEY: mint a signed download link", runLink}
}

// clientFlags parses the flags every client subcommand shares (anywhere on
// the command line, parseAnywhere) and returns the client and the positional
// arguments.
func clientFlags(name string, args []string, getenv func(string) string, extra func(*flag.FlagSet)) (*client.Client, []string, error) {
	fs := flag.NewFlagSet("mcpblob "+name, flag.ContinueOnError)
	server := fs.String("server", "", "server URL (env MCPBLOB_SERVER, default http://127.0.0.1:8080)")
	if extra != nil {
		extra(fs)
	}
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if *server == "" {
		*server = getenv("MCPBLOB_SERVER")
	}
	if *server == "" {
		*server = "http://127.0.0.1:8080"
	}
	c, err := client.New(*server, client.Options{APIKey: getenv("MCPBLOB_API_KEY"), UserAgent: "mcpblob/" + versionString()})
	return c, rest, err
}

// fail prints err for subcommand name on one line and returns the exit
// code. When no connection to the server could be made, the line ends with
// where to look: most often no server runs at the address, or --server
// (MCPBLOB_SERVER) names another.
func fail(name string, err error) int {
	hint := ""
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		hint = "; is `mcpblob serve` running? (--server, MCPBLOB_SERVER)"
	}
	fmt.Fprintf(os.Stderr, "mcpblob %s: %v%s\n", name, err, hint)
	return exitFailed
}

func runPut(ctx context.Context, args []string, getenv func(string) string) int {
	var contentType string
	var whole bool
	var ttl time.Duration
	c, rest, err := clientFlags("put", args, getenv, func(fs *flag.FlagSet) {
		fs.StringVar(&contentType, "type", "", "media type (default: from the file extension, else application/octet-stream)")
		fs.BoolVar(&whole, "whole", false, "send the file as one PUT, not resumably in 8 MiB chunks (tus)")
		fs.DurationVar(&ttl, "ttl", 0, "the blob's lifetime (whole seconds, 1s to 87600h); once it passes the blob is gone (default: none)")
	})
	if err == nil && (ttl < 0 || ttl > 0 && ttl < time.Second || ttl > storage.MaxTTL) {
		err = fmt.Errorf("--ttl %v: want 1s to %v, or leave it out for no expiry", ttl, storage.MaxTTL)
	}
	if err != nil || len(rest) < 1 || len(rest) > 2 {
		return usageError("put FILE [KEY] [--type T] [--whole] [--ttl D]", err)
	}
	path := rest[0]
	key := filepath.Base(path)
	if len(rest) == 2 {
		key = rest[1]
	}
	if contentType == "" {
		contentType = mime.TypeByExtension(filepath.Ext(path))
	}
	bar := newProgressBar(os.Stderr, "put "+key)
	b, err := c.PutFile(ctx, key, path, client.PutFileOptions{ContentType: contentType, Filename: filepath.Base(path),
		StateDir: putStateDir(), Whole: whole, TTL: ttl, Progress: bar.update,
		Notice: func(msg string) { fmt.Fprintf(os.Stderr, "mcpblob put: %s\n", msg) }})
	bar.finish()
	if err != nil {
		return fail("put", err)
	}
	fmt.Printf("%s\t%d\t%s\n", b.URI, b.Size, b.SHA256)
	return exitOK
}

// putStateDir is where `mcpblob put` records its resumable uploads, so a
// put run again after a kill continues: the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux), or none when there is none.
func putStateDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpblob", "put")
}

func runGet(ctx context.Context, args []string, getenv func(string) string) int {
	c, rest, err := clientFlags("get", args, getenv, nil)
	if err != nil || len(rest) < 1 || len(rest) > 2 {
		return usageError("get KEY [FILE]", err)
	}
	key := rest[0]
	path := filepath.Base(key)
	if len(rest) == 2 {
		path = rest[1]
	}
	if path == "-" {
		r, err := c.Open(ctx, key, 0, "")
		if err != nil {
			return fail("get", err)
		}
		defer r.Close()
		if _, err := io.Copy(os.Stdout, r); err != nil {
			return fail("get", err)
		}
		return exitOK
	}
	bar := newProgressBar(os.Stderr, "get "+key)
	b, err := c.Download(ctx, key, path, bar.update)
	bar.finish()
	if err != nil {
		return fail("get", err)
	}
	fmt.Printf("%s\t%d\t%s\n", path, b.Size, b.SHA256)
	return exitOK
}

func runLs(ctx context.Context, args []string, getenv func(string) string) int {
	c, rest, err := clientFlags("ls", args, getenv, nil)
	if err != nil || len(rest) > 1 {
		return usageError("ls [PREFIX]", err)
	}
	prefix := ""
	if len(rest) == 1 {
		prefix = rest[0]
	}
	cursor := ""
	for {
		p, err := c.List(ctx, prefix, cursor, 0)
		if err != nil {
			return fail("ls", err)
		}
		for _, b := range p.Items {
			fmt.Printf("%12d  %s  %-24s  %s\n", b.Size, b.Modified.UTC().Format(time.RFC3339), b.MimeType, b.Key)
		}
		if p.NextCursor == "" {
			return exitOK
		}
		cursor = p.NextCursor
	}
}

func runRm(ctx context.Context, args []string, getenv func(string) string) int {
	c, rest, err := clientFlags("rm", args, getenv, nil)
	if err != nil || len(rest) != 1 {
		return usageError("rm KEY", err)
	}
	if err := c.Delete(ctx, rest[0]); err != nil {
		return fail("rm", err)
	}
	return exitOK
}

// runLink prints the minted URL alone on stdout, so `curl "$(mcpblob link
// KEY)"` works, and its expiry on stderr; --json prints both as one JSON
// object on stdout.
func runLink(ctx context.Context, args []string, getenv func(string) string) int {
	var ttl time.Duration
	var singleUse, asJSON bool
	c, rest, err := clientFlags("link", args, getenv, func(fs *flag.FlagSet) {
		fs.DurationVar(&ttl, "ttl", 15*time.Minute, "how long the link works")
		fs.BoolVar(&singleUse, "single-use", false, "the link works once")
		fs.BoolVar(&asJSON, "json", false, `print {"url":…,"expires":…} on stdout instead of the bare URL`)
	})
	if err != nil || len(rest) != 1 {
		return usageError("link KEY [--ttl D] [--single-use] [--json]", err)
	}
	l, err := c.Link(ctx, client.LinkRequest{Key: rest[0], TTLSeconds: int(ttl.Seconds()), SingleUse: singleUse})
	if err != nil {
		return fail("link", err)
	}
	expires := l.ExpiresAt.UTC().Format(time.RFC3339)
	if asJSON {
		out, _ := json.Marshal(struct {
			URL     string `json:"url"`
			Expires string `json:"expires"`
		}{l.URL, expires})
		fmt.Printf("%s\n", out)
		return exitOK
	}
	fmt.Println(l.URL)
	fmt.Fprintf(os.Stderr, "expires %s\n", expires)
	return exitOK
}

func usageError(synopsis string, err error) int {
	if err != nil && err != flag.ErrHelp {
		fmt.Fprintf(os.Stderr, "mcpblob: %v\n", err)
	}
	fmt.Fprintf(os.Stderr, "usage: mcpblob %s [--server URL]\n", synopsis)
	return exitUsage
}
