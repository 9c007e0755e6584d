// Command slowstorm is the bounded slow-body storm (docs/security.md,
// "Limits"), at the size core/server's TestSlowBodyStorm is too small
// for: it builds mcpblob, starts `mcpblob serve` with default limits on a
// free loopback port (local store, two API keys), and keeps -conns
// connections (default 2000) trickling their request bodies — one byte
// every -every (5 s) — into the four upload surfaces: chunked tools/call
// upload_file, small MCP bodies, multipart /u uploads and PUT /v1/blobs,
// each reconnecting -retry after the server closed it. Meanwhile /healthz
// is polled every 100 ms and another principal uploads slowly but steadily
// (12 KiB/s, three times the default minimum rate). It samples the
// server's RSS from /proc/PID/status and prints peak and settled RSS,
// /healthz latencies, the answers by surface and the longest connection.
//
//	cd loadtest && go run ./slowstorm                         # 2000 connections, 60 s
//	cd loadtest && go run ./slowstorm -conns 500 -duration 20s
//
// It exits non-zero when the peak RSS growth reaches -max-rss (512 MiB),
// a /healthz poll failed or its p99 passed -health (100 ms), an honest
// upload failed, or a trickling connection lived past the rate rule. All
// traffic goes to 127.0.0.1; the run stops by itself.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// options are the command line.
type options struct {
	repo                      string
	conns                     int
	every, retry, duration    time.Duration
	maxRSS                    int64 // MiB
	health                    time.Duration
	minRate                   int64
	grace, readTimeout, bound time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowstorm:", err)
	}
	os.Exit(code)
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("slowstorm", flag.ContinueOnError)
	fs.StringVar(&o.repo, "repo", "..", "mcpblob repository `root`")
	fs.IntVar(&o.conns, "conns", 2000, "trickling connections kept open (at most 5000)")
	fs.DurationVar(&o.every, "every", 5*time.Second, "time between two trickled bytes")
	fs.DurationVar(&o.retry, "retry", 5*time.Second, "pause before a closed connection is opened again")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "length of the storm (at most 10m)")
	fs.Int64Var(&o.maxRSS, "max-rss", 512, "largest acceptable peak RSS growth of the server in MiB")
	fs.DurationVar(&o.health, "health", 100*time.Millisecond, "largest acceptable p99 of /healthz")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.conns < 1 || o.conns > 5000 || o.duration <= 0 || o.duration > 10*time.Minute {
		return o, fmt.Errorf("-conns must be in [1, 5000] and -duration in (0, 10m]")
	}
	// The server's defaults (docs/security.md "Limits"): 4 KiB/s after a
	// 10 s slow start, at most 30 s banked. A connection that trickles is
	// cut off about 12 s after its headers (its first 8 KiB buy 2 s).
	o.minRate, o.grace, o.readTimeout = 4096, 10*time.Second, 30*time.Second
	o.bound = o.grace + 2*time.Second + o.every + 3*time.Second
	return o, nil
}

func run(ctx context.Context, args []string) (int, error) {
	o, err := parse(args)
	if err != nil {
		return 2, err
	}
	srv, err := startServer(o)
	if err != nil {
		return 1, err
	}
	defer srv.stop()
	fmt.Printf("slowstorm: %d connections trickling a byte every %v for %v against mcpblob pid %d on %s\n",
		o.conns, o.every, o.duration, srv.p.PID(), srv.addr)
	r, err := storm(ctx, o, srv)
	if err != nil {
		return 1, fmt.Errorf("%w\nserver log:\n%s", err, tail(srv.p.Logs(), 2000))
	}
	r.print(o)
	if problems := r.problems(o); len(problems) > 0 {
		for _, p := range problems {
			fmt.Println("FAIL:", p)
		}
		return 1, nil
	}
	fmt.Println("PASS")
	return 0, nil
}

// server is the started mcpblob and what the storm needs from it.
type server struct {
	p                   *proc.Proc
	addr, base          string
	stormKey, honestKey string
	work                string
}

func (s *server) stop() {
	s.p.Stop()
	os.RemoveAll(s.work)
}

// startServer builds mcpblob from the working tree and starts it with two
// API keys and default limits.
func startServer(o options) (*server, error) {
	root, err := filepath.Abs(o.repo)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "mcpblob-slowstorm-")
	if err != nil {
		return nil, err
	}
	s := &server{work: work, stormKey: "mcpb_storm" + rand.Text(), honestKey: "mcpb_honest" + rand.Text()}
	bin := filepath.Join(work, "mcpblob")
	if err := proc.GoBuild(root, bin, "./cmd/mcpblob"); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	keys := filepath.Join(work, "keys")
	lines := digest(s.stormKey) + " storm\n" + digest(s.honestKey) + " honest\n"
	if err := os.WriteFile(keys, []byte(lines), 0o600); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	if s.addr, err = proc.FreeAddr(); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	s.base = "http://" + s.addr
	s.p, err = proc.Start("mcpblob", s.base+"/healthz", bin, []string{"serve", "--listen", s.addr,
		"--data", filepath.Join(work, "data"), "--auth-keys", keys, "--log-level", "warn"})
	if err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return s, nil
}

func digest(key string) string {
	d := sha256.Sum256([]byte(key))
	return hex.EncodeToString(d[:])
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
