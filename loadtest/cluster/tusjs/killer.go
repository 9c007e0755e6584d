package tusjs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// killAttempts bounds the kills per cut: a kill that lands between two
// PATCHes (the node had just answered; the next PATCH went elsewhere)
// cuts nothing, and the killer tries again.
const killAttempts = 4

// cutWait is how long a kill has to show as tus-js-client's retry.
const cutWait = 2 * time.Second

// kill is one SIGKILL of the node receiving the upload.
type kill struct {
	node    string
	pid     int
	atBytes int64 // the upload's progress when the kill was decided
	err     error
	cut     bool // tus-js-client retried after it: the kill cut a PATCH
}

// killer SIGKILLs the node receiving the upload each time its progress
// passes the next cut, and restarts it, on a goroutine of its own: the
// upload's events keep being read meanwhile.
type killer struct {
	cuts  []int64
	next  int
	due   chan int64 // the progress at each cut passed
	done  chan struct{}
	kills []kill
	// retries counts tus-js-client's retries, from its events.
	retries atomic.Int64
}

func newKiller(ctx context.Context, c Config, size int64) *killer {
	k := &killer{due: make(chan int64, Cuts), done: make(chan struct{})}
	for i := 1; i <= Cuts; i++ {
		k.cuts = append(k.cuts, size*int64(i)/(Cuts+1))
	}
	go func() {
		defer close(k.done)
		for at := range k.due {
			k.cutOnce(ctx, c, at)
		}
	}()
	return k
}

// cutOnce kills the receiving node until a kill shows as a retry of
// tus-js-client's, at most killAttempts times.
func (k *killer) cutOnce(ctx context.Context, c Config, at int64) {
	for range killAttempts {
		before := k.retries.Load()
		kl := killReceiver(ctx, c)
		kl.atBytes = at
		if kl.err == nil {
			kl.cut = k.retried(ctx, before)
		}
		k.kills = append(k.kills, kl)
		if kl.err != nil || kl.cut {
			return
		}
	}
}

// retried waits up to cutWait for the retries to pass before.
func (k *killer) retried(ctx context.Context, before int64) bool {
	for end := time.Now().Add(cutWait); time.Now().Before(end) && ctx.Err() == nil; {
		if k.retries.Load() > before {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return k.retries.Load() > before
}

// progress is upload.mjs's event handler; it never blocks (due has room
// for every cut).
func (k *killer) progress(ev event) {
	if ev.Event == "retry" {
		k.retries.Add(1)
	}
	if ev.Event == "progress" && k.next < len(k.cuts) && ev.Bytes >= k.cuts[k.next] {
		k.next++
		k.due <- ev.Bytes
	}
}

// wait waits for the kills and restarts and returns the kills.
func (k *killer) wait() []kill {
	close(k.due)
	<-k.done
	return k.kills
}

// killReceiver finds the node reading the upload's bytes, SIGKILLs it and
// restarts it. The node is the one that read most over 150 ms and still
// reads a PATCH's body (128 KiB or more) in the 20 ms before the kill:
// between two PATCHes the next one may go to another node (nginx's
// least_conn), and killing the node that has just answered would cut
// nothing. The 20 ms check can keep missing: in one make test run it did
// for the whole last third of the upload, and the check failed with a
// single cut. So after strictTries tries the 150 ms reader alone is
// killed (a kill that cuts nothing is tried again by cutOnce). When no
// node is found, the error says what the tries saw.
func killReceiver(ctx context.Context, c Config) kill {
	var n *Node
	idle, paused := 0, 0
	for try := 0; n == nil && try < findTries && ctx.Err() == nil; try++ {
		n = busiestReader(c.Nodes, 150*time.Millisecond, 256<<10)
		switch {
		case n == nil:
			idle++
		case try < strictTries && busiestReader([]Node{*n}, 20*time.Millisecond, 128<<10) == nil:
			n = nil
			paused++
		}
	}
	if n == nil {
		return kill{err: fmt.Errorf("no node was reading the upload (%d tries: no node read 256 KiB in 150 ms %d times; one did but paused in the next 20 ms %d times)", idle+paused, idle, paused)}
	}
	kl := kill{node: n.Name, pid: n.PID()}
	c.Logf("tus-js-client: SIGKILL %s (pid %d), the node receiving the upload", n.Name, kl.pid)
	kl.err = n.KillRestart()
	return kl
}

// findTries bounds killReceiver's search (each try takes 150–170 ms);
// strictTries of them also ask for reading in the 20 ms before the kill.
const (
	findTries   = 60
	strictTries = 12
)

// busiestReader is the running node whose rchar grew by at least least
// bytes over d, and most; nil if none did.
func busiestReader(nodes []Node, d time.Duration, least int64) *Node {
	before := make([]int64, len(nodes))
	for i, n := range nodes {
		before[i] = readChars(n.PID())
	}
	time.Sleep(d)
	var best *Node
	most := least
	for i, n := range nodes {
		if grew := readChars(n.PID()) - before[i]; before[i] >= 0 && grew >= most {
			best, most = &nodes[i], grew
		}
	}
	return best
}

// readChars is the process's rchar (bytes it read, sockets included), -1
// when it is not running.
func readChars(pid int) int64 {
	if pid == 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			if x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return x
			}
		}
	}
	return -1
}

func killText(kills []kill) string {
	var s []string
	for _, k := range kills {
		t := fmt.Sprintf("%s (pid %d) at %d MiB", k.node, k.pid, k.atBytes>>20)
		if k.err != nil {
			t += fmt.Sprintf(" (%v)", k.err)
		}
		s = append(s, t)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
