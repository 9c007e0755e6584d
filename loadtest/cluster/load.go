package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Load rates of the cluster load (loadgen.go): modest, for 2 cores shared
// by the load generator, nginx, three nodes and SeaweedFS.
const mcpRate, uploadRate, linkRate = 80, 6, 20

// loadRun is what happened while the load ran.
type loadRun struct {
	start, loadAt, end time.Time // load started, its setup done, load ended
	startMark, endMark logMark   // nginx's access log at start and end
	killedAt, goneAt   time.Time // SIGKILL sent, process reaped
	victim             *node
	why                string // why that node
	loadErr            error
	summary            *loadSummary
	logPath            string // the load's log: TRY and ACK lines
	slow               []*slowUpload
	wipe               *wipeRun
}

// slowViaNginx counts the slow uploads through nginx, and those that failed.
func (r *loadRun) slowViaNginx() (total, failed int) {
	for _, u := range r.slow {
		if u.via == "nginx" {
			total++
			if !u.acked() {
				failed++
			}
		}
	}
	return total, failed
}

// underLoad runs the cluster load (loadgen.go) through nginx, SIGKILLs the node
// that holds the load's MCP session killAfter into it, then checks every
// failed request against the kill and every acknowledged upload against the
// store (through nginx, and through the killed node once restarted).
func underLoad(ctx context.Context, c config, cl *cluster, rep *report) error {
	objs, err := seedDriveObjects(ctx, cl)
	if err != nil {
		return fmt.Errorf("storing the objects read across the volume server's loss: %w", err)
	}
	r, err := runLoad(ctx, c, cl, objs)
	if err != nil {
		return err
	}
	rep.add("load", "the load ran to its end", r.loadErr == nil, fmt.Sprintf("error: %v", r.loadErr))
	t, err := tally(cl, r)
	if err != nil {
		return err
	}
	loadFailed := r.summary.failed
	slowTotal, slowFailed := r.slowViaNginx()
	rep.add("load", "errors other than requests in flight on the killed node",
		len(t.late)+len(t.other) == 0 && loadFailed+slowFailed == len(t.inflight),
		fmt.Sprintf("vegeta: %d of %d requests failed, slow uploads through nginx: %d of %d; nginx: %d in flight on %s when it died, %d sent to it after, %d elsewhere",
			loadFailed, r.summary.requests, slowFailed, slowTotal,
			len(t.inflight), r.victim.name, len(t.late), len(t.other)))
	r.wipe.report(rep, r)
	d, err := checkData(ctx, cl, r, rep)
	if err != nil {
		return err
	}
	rep.load = render(c, cl, r, t, d)
	return nil
}

// runLoad runs the load, kills the session's node killAfter into the load
// and a SeaweedFS volume server (its folder wiped) a third of the remaining
// load later, reading objs from then on.
func runLoad(ctx context.Context, c config, cl *cluster, objs map[string]sent) (*loadRun, error) {
	r := &loadRun{logPath: filepath.Join(cl.work, "load.log")}
	kctx, cancel := context.WithTimeout(ctx, c.duration+30*time.Second)
	defer cancel()
	logf("vegeta: %s of load through nginx; SIGKILL of one node %s into it", c.duration, c.killAfter)
	r.start, r.startMark = time.Now(), markLog(cl.accessLog)
	done := make(chan error, 1)
	go func() {
		var err error
		r.summary, err = clusterLoad(kctx, cl.lb, cl.apiKey, r.logPath, c.duration)
		done <- err
	}()

	// The load starts once its setup has minted its link.
	var err error
	r.loadAt, err = waitForLine(ctx, cl.accessLog, r.startMark, done, func(e entry) bool {
		return e.method == http.MethodPost && e.uri == "/v1/links"
	})
	if err != nil {
		return nil, err
	}
	select {
	case <-time.After(time.Until(r.loadAt.Add(c.killAfter - slowLead))):
	case err := <-done:
		return nil, fmt.Errorf("the load ended before the kill (%v)", err)
	}
	r.victim, r.why = sessionNode(cl, r.startMark)
	r.victim.killedPID = r.victim.proc.PID()
	waitSlow := startSlowUploads(ctx, cl, r.victim)
	time.Sleep(slowLead)
	r.killedAt = time.Now()
	if err := r.victim.proc.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("kill %s: %w", r.victim.name, err)
	}
	// The process holds its sockets until the kernel has torn it down: a
	// request nginx sends before then is in flight on it too.
	for !r.victim.proc.Exited() && time.Since(r.killedAt) < 5*time.Second {
		time.Sleep(time.Millisecond)
	}
	r.goneAt = time.Now()
	logf("SIGKILL %s (pid %d) %.1fs into the load (its setup took %.1fs); reaped %.0f ms later",
		r.victim.name, r.victim.killedPID, r.killedAt.Sub(r.loadAt).Seconds(), r.loadAt.Sub(r.start).Seconds(), ms(r.goneAt.Sub(r.killedAt)))
	stopWipe := startWipe(ctx, cl, objs, r.loadAt.Add(c.killAfter+(c.duration-c.killAfter)/3), r.victim)
	r.loadErr = <-done
	r.wipe = stopWipe()
	r.slow = waitSlow()
	r.end, r.endMark = time.Now(), markLog(cl.accessLog)
	if r.summary == nil {
		return nil, fmt.Errorf("the cluster load: %v", r.loadErr)
	}
	return r, nil
}

// waitForLine polls nginx's access log until a request logged after from
// matches, and returns when it ended.
func waitForLine(ctx context.Context, path string, from logMark, done <-chan error, match func(entry) bool) (time.Time, error) {
	for {
		entries, err := readAccessLog(path, from, logToEnd)
		if err != nil {
			return time.Time{}, err
		}
		for _, e := range entries {
			if match(e) {
				return e.end, nil
			}
		}
		select {
		case err := <-done:
			return time.Time{}, fmt.Errorf("the load ended before it started (%v)", err)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sessionNode is the node that answered the newest /mcp request of the
// load in nginx's log: the node the load's session hashes to.
func sessionNode(cl *cluster, from logMark) (*node, string) {
	entries, _ := readAccessLog(cl.accessLog, from, logToEnd)
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; e.uri == "/mcp" {
			if n := cl.nodeByAddr(e.last()); n != nil {
				return n, "the node the load's MCP session hashes to"
			}
		}
	}
	return cl.nodes[1], "no /mcp request seen yet: the second node"
}

// tallied is nginx's view of the load.
type tallied struct {
	entries               int
	routes                []*routeStats
	inflight, late, other []entry           // failed: in flight on the victim at the kill, sent to it after, elsewhere
	retried, retriedOK    int               // requests nginx passed to another node
	failover              map[string]int    // answered /mcp requests after the kill, by node
	slowRoute             map[string]string // nodes tried for each slow upload through nginx
}

type routeStats struct {
	name                   string
	total, failed, retried int
}

// tally sorts nginx's log lines of the load: per route, retries, and each
// failure against the kill.
func tally(cl *cluster, r *loadRun) (*tallied, error) {
	entries, err := readAccessLog(cl.accessLog, r.startMark, r.endMark)
	if err != nil {
		return nil, err
	}
	t := &tallied{entries: len(entries), failover: map[string]int{}, slowRoute: map[string]string{}}
	byName := map[string]*routeStats{}
	for _, e := range entries {
		name := routeName(e)
		st := byName[name]
		if st == nil {
			st = &routeStats{name: name}
			byName[name] = st
			t.routes = append(t.routes, st)
		}
		st.total++
		if key, ok := strings.CutPrefix(e.uri, "/v1/blobs/"); ok && strings.HasPrefix(key, "cluster/slow/") {
			t.slowRoute[key] = cl.names(e.upstreams)
		}
		if len(e.upstreams) > 1 {
			st.retried++
			t.retried++
			if !e.failed() {
				t.retriedOK++
			}
		}
		if !e.failed() {
			if e.uri == "/mcp" && e.start().After(r.killedAt) {
				t.failover[cl.name(e.last())]++
			}
			continue
		}
		st.failed++
		switch {
		case !slices.Contains(e.upstreams, r.victim.addr):
			t.other = append(t.other, e)
		case !e.start().After(r.goneAt.Add(2 * time.Millisecond)): // nginx logs whole milliseconds
			t.inflight = append(t.inflight, e)
		default:
			t.late = append(t.late, e)
		}
	}
	return t, nil
}

// dataCheck is what the store held after the load.
type dataCheck struct {
	tried, acked, readBack int
	unacked, unackedOK     int      // committed although the client got no answer
	lostOnRestart          int      // acknowledged, not read back whole on the restarted node
	warnings               []string // load log lines besides TRY and ACK
}

// checkData reads back every acknowledged upload through nginx, lists what
// the store holds, restarts the killed node and reads everything through it.
func checkData(ctx context.Context, cl *cluster, r *loadRun, rep *report) (*dataCheck, error) {
	const g = "load"
	tries, acks, warnings, err := readLoadLog(r.logPath)
	if err != nil {
		return nil, err
	}
	for _, u := range r.slow {
		tries[u.key] = u.sent
		if u.acked() {
			acks[u.key] = u.sent
		}
	}
	d := &dataCheck{tried: len(tries), acked: len(acks), warnings: warnings}
	var bad []string
	d.readBack, bad = cl.verify(ctx, cl.lb, acks)
	rep.add(g, "acknowledged uploads read back through nginx", len(acks) > 0 && len(bad) == 0,
		fmt.Sprintf("%d of %d with the sha256 the client sent%s", d.readBack, len(acks), listed(bad)))

	var committed []string
	for _, prefix := range []string{"cluster/load/", "cluster/slow/"} {
		keys, err := cl.listKeys(ctx, cl.lb, prefix)
		if err != nil {
			return nil, err
		}
		committed = append(committed, keys...)
	}
	unacked := map[string]sent{}
	var strangers []string
	for _, k := range committed {
		if _, ok := acks[k]; ok {
			continue
		}
		if t, ok := tries[k]; ok {
			unacked[k] = t
		} else {
			strangers = append(strangers, k)
		}
	}
	missing := 0
	for k := range acks {
		if !slices.Contains(committed, k) {
			missing++
		}
	}
	d.unacked = len(unacked)
	d.unackedOK, bad = cl.verify(ctx, cl.lb, unacked)
	rep.add(g, "store holds only whole uploads", len(strangers) == 0 && len(bad) == 0 && missing == 0,
		fmt.Sprintf("%d objects listed: %d acknowledged (%d acknowledged missing from the list), %d committed without an answer reaching the client (%d intact)%s%s",
			len(committed), len(committed)-len(unacked)-len(strangers), missing, len(unacked), d.unackedOK, listed(bad), listed(strangers)))

	// Objects the store lists that are not a whole upload: acknowledged ones
	// listed but not read back whole, others not intact, keys nobody sent.
	partial := (len(acks) - missing - d.readBack) + (len(unacked) - d.unackedOK) + len(strangers)
	rep.sum("partial objects in the store", partial == 0 && len(acks) > 0,
		fmt.Sprintf("%d of %d objects listed under the load's prefixes after the SIGKILLs and the volume server's wipe", partial, len(committed)))

	restartAt := time.Now()
	lost := max(len(acks)-d.readBack, missing)
	defer func() {
		rep.sum("acknowledged uploads lost", lost == 0 && len(acks) > 0,
			fmt.Sprintf("%d of %d uploads answered 201 (the load and the uploads streaming across the kill): not listed %d, not read back whole through nginx %d, on the restarted %s %d",
				lost, len(acks), missing, len(acks)-d.readBack, r.victim.name, d.lostOnRestart))
	}()
	if err := r.victim.start(); err != nil {
		rep.fail(g, "restart "+r.victim.name, err.Error())
		d.lostOnRestart = len(acks)
		lost = len(acks)
		return d, nil
	}
	n, bad := cl.verify(ctx, r.victim.url(), acks)
	d.lostOnRestart = len(acks) - n
	lost = max(lost, d.lostOnRestart)
	rep.add(g, "acknowledged uploads read back on the restarted "+r.victim.name, len(bad) == 0,
		fmt.Sprintf("%d of %d; the node was ready %.1fs after its restart (pid %d)%s", n, len(acks), time.Since(restartAt).Seconds(), r.victim.proc.PID(), listed(bad)))
	return d, nil
}

// render is the report's load section.
func render(c config, cl *cluster, r *loadRun, t *tallied, d *dataCheck) []string {
	failures := func(es []entry) string {
		if len(es) == 0 {
			return "none"
		}
		var s []string
		for _, e := range es[:min(len(es), 8)] {
			s = append(s, fmt.Sprintf("`%s %s` → %d after %.0f ms, started %s the kill (tried %s; node status %s; response completed: %v)",
				e.method, e.uri, e.status, ms(e.dur), relative(e.start().Sub(r.killedAt)), cl.names(e.upstreams), e.upStatus, e.done))
		}
		if len(es) > 8 {
			s = append(s, fmt.Sprintf("and %d more", len(es)-8))
		}
		return strings.Join(s, "; ")
	}
	sum := r.summary
	l := []string{
		fmt.Sprintf("vegeta %s (loadtest/cluster/loadgen.go) ran for %s through nginx: %d/s MCP (4 KiB resources/read and tools/list on one session), %d/s uploads (64 KiB–3 MiB; PUT, or endpoint + multipart POST), %d/s 256 KiB link ranges. %s (pid %d) was SIGKILLed %.1f s into the load (%s), reaped %.0f ms later (requests nginx sent it until then count as in flight), and restarted after the load.",
			vegetaVersion(), c.duration, mcpRate, uploadRate, linkRate, r.victim.name, r.victim.killedPID, r.killedAt.Sub(r.loadAt).Seconds(), r.why, ms(r.goneAt.Sub(r.killedAt))),
		"",
		fmt.Sprintf("- vegeta: %d requests, %d failed; checks %d passed, %d failed%s; %d requests not sent in time; latency median %.1f ms, p99 %.1f ms, max %.0f ms.",
			sum.requests, sum.failed, sum.checksOK, sum.checksBad, classes(sum.errors), sum.dropped,
			ms(sum.median), ms(sum.p99), ms(sum.longest)),
		fmt.Sprintf("- nginx: %d requests, %d failed; %d passed to another node (proxy_next_upstream), %d of them answered.",
			t.entries, len(t.inflight)+len(t.late)+len(t.other), t.retried, t.retriedOK),
		fmt.Sprintf("- The load's MCP session after the kill: %s (any node verifies the session id).", counts(t.failover, "answered requests")),
		fmt.Sprintf("- Failed, in flight on %s when it died: %d: %s. nginx does not resend a POST it has sent (a tools/call may not be safe to repeat), nor a body it has started to stream.",
			r.victim.name, len(t.inflight), failures(t.inflight)),
		fmt.Sprintf("- Failed, sent to %s after it died: %s.", r.victim.name, failures(t.late)),
		fmt.Sprintf("- Failed elsewhere: %s.", failures(t.other)),
		fmt.Sprintf("- Uploads streamed across the kill (%d MiB each over %.1f s, started %.1f s before it): %s.",
			slowSize>>20, slowTime.Seconds(), slowLead.Seconds(), slowResults(cl, r, t)),
		fmt.Sprintf("- Uploads in all: %d started, %d acknowledged (201), %d of those read back with the client's sha256; %d more were committed though their answer never reached the client (%d of them intact).",
			d.tried, d.acked, d.readBack, d.unacked, d.unackedOK),
	}
	if len(d.warnings) > 0 {
		l = append(l, fmt.Sprintf("- the load logged %d other lines; the first: `%s`", len(d.warnings), clip([]byte(d.warnings[0]))))
	}
	l = append(l, "", "| route | requests | failed | passed to another node |", "| --- | --- | --- | --- |")
	for _, st := range t.routes {
		l = append(l, fmt.Sprintf("| %s | %d | %d | %d |", st.name, st.total, st.failed, st.retried))
	}
	return l
}

// slowResults says where each slow upload went and how it ended.
func slowResults(cl *cluster, r *loadRun, t *tallied) string {
	var s []string
	for _, u := range r.slow {
		via := "directly on " + u.via
		if u.via == "nginx" {
			via = "nginx → " + t.slowRoute[u.key]
		}
		how := fmt.Sprintf("http %d", u.status)
		if u.err != nil {
			how = "error " + u.err.Error()
		}
		s = append(s, fmt.Sprintf("%s: %s", via, how))
	}
	return strings.Join(s, "; ")
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

func relative(d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("%.0f ms before", -ms(d))
	}
	return fmt.Sprintf("%.0f ms after", ms(d))
}

// sent is one upload the load's log names.
type sent struct {
	size int64
	sha  string
}

// readLoadLog returns the TRY and ACK lines of the load's log by key, and the other lines.
func readLoadLog(path string) (tries, acks map[string]sent, other []string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	tries, acks = map[string]sent{}, map[string]sent{}
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		if len(f) == 4 && (f[0] == "TRY" || f[0] == "ACK") {
			size, _ := strconv.ParseInt(f[2], 10, 64)
			u := sent{size: size, sha: f[3]}
			if f[0] == "TRY" {
				tries[f[1]] = u
			} else {
				acks[f[1]] = u
			}
		} else if strings.TrimSpace(line) != "" {
			other = append(other, strings.TrimSpace(line))
		}
	}
	return tries, acks, other, nil
}

// verify GETs every blob of want through base and compares size and
// sha256; it returns how many matched and a description of each that did not.
func (cl *cluster) verify(ctx context.Context, base string, want map[string]sent) (int, []string) {
	keys := make(chan string)
	var mu sync.Mutex
	var bad []string
	ok := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for k := range keys {
				status, b, err := cl.call(ctx, http.MethodGet, base+"/v1/blobs/"+k, nil)
				w := want[k]
				mu.Lock()
				if err == nil && status == http.StatusOK && int64(len(b)) == w.size && sum(b) == w.sha {
					ok++
				} else {
					bad = append(bad, fmt.Sprintf("%s: http %d, %d bytes (want %d), err %v", k, status, len(b), w.size, err))
				}
				mu.Unlock()
			}
		})
	}
	for k := range want {
		keys <- k
	}
	close(keys)
	wg.Wait()
	slices.Sort(bad)
	return ok, bad
}

// listKeys lists every key under prefix through base's control API.
func (cl *cluster) listKeys(ctx context.Context, base, prefix string) ([]string, error) {
	var keys []string
	cursor := ""
	for {
		u := base + "/v1/blobs?limit=1000&prefix=" + url.QueryEscape(prefix)
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		status, b, err := cl.call(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET /v1/blobs: http %d: %s", status, clip(b))
		}
		var page struct {
			Items []struct {
				Key string `json:"key"`
			} `json:"items"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.NewDecoder(io.LimitReader(bytes.NewReader(b), 64<<20)).Decode(&page); err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			keys = append(keys, it.Key)
		}
		if page.NextCursor == "" {
			return keys, nil
		}
		cursor = page.NextCursor
	}
}

// counts renders "n what on a, m what on b".
func counts(m map[string]int, what string) string {
	if len(m) == 0 {
		return "no " + what
	}
	var s []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s = append(s, fmt.Sprintf("%d %s on %s", m[k], what, k))
	}
	return strings.Join(s, ", ")
}

// listed renders problem lines for a detail cell.
func listed(s []string) string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > 5 {
		s = append(s[:5:5], fmt.Sprintf("and %d more", len(s)-5))
	}
	return ": " + strings.Join(s, "; ")
}
