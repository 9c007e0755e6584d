package tusb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// resume is one P12 run.
type resume struct {
	sent      int64         // bytes the client had handed to the connection when the server was killed
	offset    int64         // Upload-Offset after the restart
	toHead    time.Duration // process start → HEAD answered
	toAccept  time.Duration // process start → the first PATCH after it answered 204
	firstSize int64         // that PATCH's bytes (up to the next chunk boundary)
	err       error
}

// again is the bytes the client sends a second time.
func (r resume) again() int64 { return max(0, r.sent-r.offset) }

var errKilled = errors.New("server killed")

// killReader hands out data until left bytes have gone, then SIGKILLs the
// server (once they are handed to the connection) and fails the request;
// with left < 0 it hands out all of data. sent counts the bytes handed out.
type killReader struct {
	data []byte
	left int64
	sent *int64
	kill func()
}

func (k *killReader) Read(p []byte) (int, error) {
	if k.left == 0 {
		k.kill()
		return 0, errKilled
	}
	if len(k.data) == 0 {
		return 0, io.EOF
	}
	lim := int64(len(p))
	if k.left >= 0 {
		lim = min(lim, k.left)
	}
	n := copy(p[:lim], k.data)
	k.data = k.data[n:]
	if k.left >= 0 {
		k.left -= int64(n)
	}
	*k.sent += int64(n)
	return n, nil
}

// resumeOnce uploads raw to s in chunks, SIGKILLs s once the client has
// sent half the bytes and half a chunk more (in the middle of a PATCH),
// starts it again on the same folder and address, resumes from HEAD and
// checks the stored blob's sha256.
func resumeOnce(ctx context.Context, s *server, raw []byte, p plan, key, sum string) resume {
	var res resume
	c := s.tus
	u, err := c.create(ctx, s.path, p.size, map[string]string{"key": key, "filename": "p12.bin"})
	if err != nil {
		return resume{err: err}
	}
	killAt := p.size/2 + p.chunk/2
	for res.sent < killAt {
		end := min(p.size, (res.sent/p.chunk+1)*p.chunk)
		body := &killReader{data: raw[res.sent:end], left: min(end, killAt) - res.sent, sent: &res.sent, kill: func() { s.proc.Kill() }}
		if end <= killAt {
			body.left = -1 // this chunk goes whole
		}
		if _, err := c.patch(ctx, u, res.sent, body, end-res.sent); err != nil {
			if s.proc.Exited() {
				break
			}
			return resume{err: err}
		}
	}
	c.hc.CloseIdleConnections()
	started, restarted := restart(s)
	res.offset, res.toHead, err = headUntilUp(ctx, c, u, started)
	if err != nil {
		res.err = err
	} else {
		res.firstSize = min(p.size, (res.offset/p.chunk+1)*p.chunk) - res.offset
		_, res.err = c.send(ctx, u, raw[:res.offset+res.firstSize], res.offset, p.chunk)
		res.toAccept = time.Since(started)
	}
	if err := <-restarted; err != nil && res.err == nil {
		res.err = err
	}
	if res.err == nil {
		_, res.err = c.send(ctx, u, raw, res.offset+res.firstSize, p.chunk)
	}
	if res.err == nil {
		res.err = checkSHA(ctx, s, key, sum)
	}
	deleteBlob(ctx, s, key)
	return res
}

// restart starts s's command again and returns the time just before its
// process started and a channel that answers once it is ready (s.proc set).
func restart(s *server) (time.Time, <-chan error) {
	done := make(chan error, 1)
	cmd := s.command()
	t0 := time.Now()
	go func() {
		p, err := proc.StartCmd(s.name, s.readyURL(), cmd)
		if err == nil {
			s.proc = p
		}
		done <- err
	}()
	return t0, done
}

// headUntilUp asks for the upload's offset every millisecond until the
// restarted server answers (at most 30 s from started).
func headUntilUp(ctx context.Context, c *client, u string, started time.Time) (int64, time.Duration, error) {
	for {
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		off, err := c.head(hctx, u)
		cancel()
		if err == nil {
			return off, time.Since(started), nil
		}
		if time.Since(started) > 30*time.Second || ctx.Err() != nil {
			return 0, 0, fmt.Errorf("HEAD after the restart: %w", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// runP12 runs p.resumes kill-and-resume uploads against s.
func runP12(ctx context.Context, s *server, raw []byte, p plan, sum string) []resume {
	measure.Logf("P12 resume after SIGKILL at 50 %%, %d MiB, %d runs", p.size>>20, p.resumes)
	var out []resume
	for r := range p.resumes {
		measure.SettleDisk()
		res := resumeOnce(ctx, s, raw, p, fmt.Sprintf("p12/resume-%d", r), sum)
		measure.Logf("  P12 run %d: sent %d before the kill, offset %d after, %d sent again; HEAD %v, first PATCH (%d bytes) accepted %v after the start; %v",
			r+1, res.sent, res.offset, res.again(), res.toHead.Round(time.Millisecond), res.firstSize, res.toAccept.Round(time.Millisecond), res.err)
		out = append(out, res)
	}
	return out
}

// p12Target builds P12 from its runs.
func p12Target(p plan, runs []resume) *pair.Target {
	t := &pair.Target{ID: "P12", Title: fmt.Sprintf("resume after a SIGKILL at 50 %% of %d MiB (local store)", p.size>>20),
		Goal: "bytes sent again ≤ one chunk (8 MiB); process start → first accepted byte ≤ 200 ms"}
	again := pair.Bound{Label: "bytes sent again (worst run)", Limit: float64(p.chunk) / (1 << 20), Unit: "MiB"}
	accept := pair.Bound{Label: "process start → first PATCH accepted (worst run)", Limit: 200, Unit: "ms"}
	for i, r := range runs {
		if r.err != nil {
			t.Errors = append(t.Errors, fmt.Sprintf("run %d: %.200s", i+1, r.err))
			continue
		}
		again.Value = max(again.Value, float64(r.again())/(1<<20))
		accept.Value = max(accept.Value, float64(r.toAccept)/1e6)
	}
	t.Bounds = []pair.Bound{again, accept}
	if !again.Met() {
		t.Why = append(t.Why, fmt.Sprintf("P12: the client sent %.1f MiB again (> one chunk): after the restart HEAD reported less than the chunks acknowledged before the kill, so acknowledged bytes were not durable.", again.Value))
	}
	if !accept.Met() {
		t.Why = append(t.Why, fmt.Sprintf("P12: %.0f ms from the process's start to the first accepted PATCH (> 200 ms); HEAD answered after %s: %s", accept.Value, headTimes(runs), slowPart(runs)))
	}
	t.Detail = p12Detail(p, runs)
	return t
}

// headTimes lists the runs' process start → HEAD times.
func headTimes(runs []resume) string {
	var b bytes.Buffer
	for i, r := range runs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.0f ms", float64(r.toHead)/1e6)
	}
	return b.String()
}

// slowPart says which part of the worst run took the time.
func slowPart(runs []resume) string {
	var worst resume
	for _, r := range runs {
		if r.err == nil && r.toAccept > worst.toAccept {
			worst = r
		}
	}
	head, patch := worst.toHead, worst.toAccept-worst.toHead
	if head >= patch {
		return fmt.Sprintf("most of it (%.0f ms) passed before the server answered at all: its start (opening the store, recovering the records) is what to shorten.", float64(head)/1e6)
	}
	return fmt.Sprintf("most of it (%.0f ms) was the first PATCH of %.1f MiB itself: making a chunk durable (fsync) and replacing the upload's state is what to shorten, or the first PATCH after a resume could be smaller.", float64(patch)/1e6, float64(worst.firstSize)/(1<<20))
}
