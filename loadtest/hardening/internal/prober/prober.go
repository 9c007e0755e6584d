package prober

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Arg, as the first argument, runs the process as a prober (Run):
// PROGRAM -prober URL PERIOD KEEPALIVE.
const Arg = "-prober"

// Result is one probe: how long it took and whether it got a 200.
type Result struct {
	Took time.Duration
	OK   bool
}

// Start starts the prober process (this program, run with Arg) for url and sends its results on
// the returned channel, which is closed once ctx ended (the process is
// then killed) or the process stopped.
func Start(ctx context.Context, url string, every time.Duration, keepAlive bool) (<-chan Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, Arg, url, every.String(), strconv.FormatBool(keepAlive))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // its end tells the prober the harness is gone
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	results := make(chan Result, 16)
	go func() {
		defer close(results)
		defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r, ok := parse(sc.Text())
			if !ok {
				continue
			}
			select {
			case results <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return results, nil
}

// parse reads one line of the prober: "ok NANOSECONDS" or "fail
// NANOSECONDS".
func parse(line string) (Result, bool) {
	verdict, ns, found := strings.Cut(line, " ")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !found || err != nil || n < 0 || verdict != "ok" && verdict != "fail" {
		return Result{}, false
	}
	return Result{Took: time.Duration(n), OK: verdict == "ok"}, true
}

// Run is the prober process: args are URL, PERIOD and KEEPALIVE. It
// stops when its stdin ends (the harness is gone) or its stdout breaks.
func Run(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "prober: URL PERIOD KEEPALIVE")
		return 2
	}
	every, err := time.ParseDuration(args[1])
	keepAlive, kerr := strconv.ParseBool(args[2])
	if err != nil || kerr != nil || every <= 0 {
		fmt.Fprintln(os.Stderr, "prober:: bad period or keep-alive:", args[1], args[2])
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	Loop(ctx, args[0], every, keepAlive, func(r Result) {
		verdict := "fail"
		if r.OK {
			verdict = "ok"
		}
		if _, err := fmt.Printf("%s %d\n", verdict, r.Took); err != nil {
			cancel() // the harness is gone
		}
	})
	return 0
}

// Loop GETs url every period until ctx ends and hands each result to
// report: a new connection per probe, as a load balancer's health check
// opens, unless keepAlive. The prober process runs it, and the harness
// itself when the prober cannot start.
func Loop(ctx context.Context, url string, every time.Duration, keepAlive bool, report func(Result)) {
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 1}
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		start := time.Now()
		ok := once(ctx, hc, url)
		if ctx.Err() != nil {
			return
		}
		report(Result{Took: time.Since(start), OK: ok})
	}
}

// once GETs url and reports whether it answered 200.
func once(ctx context.Context, hc *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
