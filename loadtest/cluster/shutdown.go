package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// The graceful shutdown check: a termSize upload streams straight into a
// node over termTime; termAfter into it the node gets SIGTERM. /readyz must
// answer 503 from then until the listener closes shutdownDelay later, and
// the upload, still streaming then, must finish within gracePeriod and
// read back whole.
const (
	termSize  = 64 << 20
	termChunk = 1 << 20
	termTime  = 4500 * time.Millisecond
	termAfter = time.Second
)

// readyzSample is one GET /readyz after the SIGTERM.
type readyzSample struct {
	at     time.Duration // after the SIGTERM
	status int           // 0: no answer (err)
	err    error
}

// answer is how the trickled upload ended.
type answer struct {
	status int
	body   []byte
	err    error
	at     time.Time
}

// gracefulShutdown SIGTERMs a node while a 64 MiB upload streams into it:
// /readyz turns 503, the upload completes within the grace period, the node
// exits cleanly afterwards and the blob reads back on another node.
func gracefulShutdown(ctx context.Context, cl *cluster, rep *report) {
	const g = "shutdown"
	n := cl.nodes[1]
	ok := false
	summary := "no result"
	defer func() { rep.sum("SIGTERM during a 64 MiB upload", ok, summary) }()

	const key = "cluster/check/sigterm-64MiB"
	data := content(termSize)
	copy(data, key)
	want := sum(data)
	answered := make(chan answer, 1)
	start := time.Now()
	go func() {
		status, b, err := cl.putTrickled(ctx, n.url(), key, data, want, termChunk, termTime)
		answered <- answer{status: status, body: b, err: err, at: time.Now()}
	}()

	select {
	case a := <-answered:
		rep.fail(g, "64 MiB upload in flight at the SIGTERM", fmt.Sprintf("it ended %.1f s in, before the signal: http %d, err %v", time.Since(start).Seconds(), a.status, a.err))
		return
	case <-time.After(termAfter):
	}
	pid := n.proc.PID()
	termAt := time.Now()
	if err := n.proc.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		rep.fail(g, "SIGTERM "+n.name, err.Error())
		return
	}
	logf("SIGTERM %s (pid %d) %.1fs into a %d MiB upload", n.name, pid, termAt.Sub(start).Seconds(), termSize>>20)

	samples, a := pollReadyz(ctx, n.url(), termAt, answered)
	exited := false
	for end := time.Now().Add(gracePeriod); time.Now().Before(end) && !exited; time.Sleep(10 * time.Millisecond) {
		exited = n.proc.Exited()
	}
	exitAt := time.Now()

	readyOK, readyDetail, last503 := readyzVerdict(samples)
	rep.add(g, "/readyz during the shutdown delay", readyOK, readyDetail)

	took := a.at.Sub(termAt)
	upOK := a.err == nil && a.status == http.StatusCreated && took > shutdownDelay && took < gracePeriod
	rep.add(g, "64 MiB upload streaming across the SIGTERM completes", upOK,
		fmt.Sprintf("PUT straight to %s (%d MiB over %.1f s, SIGTERM %.1f s in): http %d, err %v %s; answered %.1f s after the SIGTERM (want after --shutdown-delay %s, within --grace-period %s)",
			n.name, termSize>>20, termTime.Seconds(), termAfter.Seconds(), a.status, a.err, errText(a.status, a.body), took.Seconds(), shutdownDelay, gracePeriod))

	exitOK := exited && n.proc.Cmd.ProcessState != nil && n.proc.Cmd.ProcessState.ExitCode() == 0 && !exitAt.Before(a.at)
	state := "still running"
	if exited {
		state = fmt.Sprintf("%v, %.1f s after the SIGTERM, %.0f ms after the upload's answer", n.proc.Cmd.ProcessState, exitAt.Sub(termAt).Seconds(), ms(exitAt.Sub(a.at)))
	}
	rep.add(g, n.name+" exits cleanly once the upload is done", exitOK, fmt.Sprintf("pid %d: %s", pid, state))
	if exited && !exitOK {
		logf("%s's log:\n%s", n.name, tail(n.proc.Logs(), 20))
	}

	status, got, err := cl.call(ctx, http.MethodGet, cl.nodes[0].url()+"/v1/blobs/"+key, nil)
	readOK := err == nil && status == http.StatusOK && len(got) == termSize && sum(got) == want
	rep.add(g, "that upload read back on "+cl.nodes[0].name, readOK,
		fmt.Sprintf("http %d, %d bytes, sha256 %s (want %s), err %v", status, len(got), short(sum(got)), short(want), err))
	ok = readyOK && upOK && exitOK && readOK
	summary = fmt.Sprintf("/readyz 503 for %.1f s; upload answered %d %.1f s after the signal (delay %s, grace %s); sha256 read back: %v; exit: %s",
		last503.Seconds(), a.status, took.Seconds(), shutdownDelay, gracePeriod, readOK, state)
}

// pollReadyz GETs base's /readyz on fresh connections (a kept-alive one
// would outlive the listener) every 100 ms until the upload is answered,
// the grace period (and 5 s) is over or ctx ends.
func pollReadyz(ctx context.Context, base string, termAt time.Time, answered <-chan answer) ([]readyzSample, answer) {
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 500 * time.Millisecond}
	var samples []readyzSample
	deadline := time.After(gracePeriod + 5*time.Second)
	for {
		s := readyzSample{at: time.Since(termAt)}
		resp, err := probe.Get(base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			s.status = resp.StatusCode
		}
		s.err = err
		samples = append(samples, s)
		select {
		case a := <-answered:
			return samples, a
		case <-deadline:
			return samples, answer{err: fmt.Errorf("no answer %s after the SIGTERM", gracePeriod+5*time.Second), at: time.Now()}
		case <-ctx.Done():
			return samples, answer{err: ctx.Err(), at: time.Now()}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readyzVerdict judges the /readyz samples taken after the SIGTERM: 503
// from the signal (allowing the first probe to race it) until the listener
// closed, never 200 after a 503, and the listener closed no earlier than
// the shutdown delay. It returns the verdict, the row's detail and when
// the last 503 came.
func readyzVerdict(samples []readyzSample) (ok bool, detail string, last503 time.Duration) {
	first503, refusedAt, back200 := -1*time.Second, time.Duration(-1), false
	n503, n200, nErr := 0, 0, 0
	for _, s := range samples {
		switch {
		case s.status == http.StatusServiceUnavailable:
			n503++
			if first503 < 0 {
				first503 = s.at
			}
			last503 = s.at
		case s.status == http.StatusOK:
			n200++
			back200 = back200 || first503 >= 0
		default:
			nErr++
			if refusedAt < 0 {
				refusedAt = s.at
			}
		}
	}
	ok = n503 > 0 && first503 <= 500*time.Millisecond && !back200 && last503 >= shutdownDelay-300*time.Millisecond &&
		(refusedAt < 0 || refusedAt >= shutdownDelay-100*time.Millisecond)
	refused := "never (the upload ended first)"
	if refusedAt >= 0 {
		refused = fmt.Sprintf("from %.1f s on (listener closed)", refusedAt.Seconds())
	}
	detail = fmt.Sprintf("%d probes after the SIGTERM: 503 ×%d from %.2f s to %.2f s, 200 ×%d (none after a 503: %v), no answer ×%d %s; --shutdown-delay %s",
		len(samples), n503, first503.Seconds(), last503.Seconds(), n200, !back200, nErr, refused, shutdownDelay)
	return ok, detail, last503
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
