package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// runStorms runs the slow-body storm, then the connection storm, each as
// a row of its own with the after-batch checks.
func (r *runner) runStorms(ctx context.Context) error {
	if !r.cfg.runs("storms") {
		return nil
	}
	if r.cfg.slowConns > 0 && ctx.Err() == nil {
		if err := r.slowBodyStorm(ctx); err != nil {
			return err
		}
	}
	if r.cfg.connStorm > 0 && ctx.Err() == nil {
		return r.connectionStorm(ctx)
	}
	return nil
}

// slowBodyStorm: half the connections trickle a data URI into a 2026-07-28
// tools/call upload_file, half a multipart body into an /u endpoint (issue
// 12 item 4), one byte per connection every trickleEvery, for slowHold.
func (r *runner) slowBodyStorm(ctx context.Context) error {
	c := r.cfg
	row := r.rep.row(r.t.name, fmt.Sprintf("storm: %d slow bodies", c.slowConns))
	row.storm = true
	nU := c.slowConns / 2
	toks := r.mintMany(ctx, nU)
	marker := r.sec.Marker()
	var conns []*slowConn
	for i := range c.slowConns - nU {
		conns = append(conns, r.slowMCP(i, marker))
	}
	for _, tok := range toks {
		conns = append(conns, r.slowUpload(tok, marker))
	}
	r.mon.phase(row.key())
	start := time.Now()
	t := runConns(ctx, r.t.addr, conns, c.trickleEvery, c.slowHold)
	r.tallyStorm(row, conns, t)
	r.rep.note("%s: %d connections (%d to /mcp upload_file, %d to /u; %d endpoints minted), one byte each every %s for %s (%.0fs in all): %s; RSS %s after they closed",
		row.key(), len(conns), len(conns)-len(toks), len(toks), len(toks), c.trickleEvery, c.slowHold, time.Since(start).Seconds(), t.describe(), r.settledRSS())
	return r.afterBatch(ctx, row, "storm")
}

// mintMany mints n upload endpoints for the storm, 8 at a time.
func (r *runner) mintMany(ctx context.Context, n int) []string {
	toks := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range toks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			toks[i] = r.e.MintUpload(ctx, "alice", map[string]any{})
		})
	}
	wg.Wait()
	var out []string
	for _, t := range toks {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// stormBody is the body size storm requests announce: over the 4 MiB MCP
// message limit, so the server streams it rather than buffering it first.
const stormBody = 64 << 20

// slowMCP is an upload_file whose data URI never ends; every other one
// puts the key after the file (the spool path instead of the direct write).
func (r *runner) slowMCP(i int, marker string) *slowConn {
	key := fmt.Sprintf("storm/mcp-%d", i)
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	args := fmt.Sprintf(`"key":%q,"file":"data:application/octet-stream;base64,%s`, key, marker)
	if i%2 == 1 {
		args = fmt.Sprintf(`"file":"data:application/octet-stream;base64,%s`, marker)
	}
	prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":%s,"name":"upload_file","arguments":{%s`, i+1, meta, args)
	hdr := []string{"Content-Type: application/json", "Accept: application/json, text/event-stream",
		"MCP-Protocol-Version: " + hostile.ModernVersion, "Mcp-Method: tools/call", "Mcp-Name: upload_file"}
	if i%2 == 0 {
		hdr = append(hdr, "Mcp-Param-Blob-Key: "+key)
	}
	head := r.e.Head(http.MethodPost, "/mcp", "alice", stormBody, hdr...)
	return &slowConn{head: strings.Replace(head, "Connection: close\r\n", "", 1), prefix: prefix, filler: 'A', sh: wire.ShapeRPC}
}

// slowUpload is a multipart upload whose file part never ends.
func (r *runner) slowUpload(tok, marker string) *slowConn {
	b := "stormB"
	prefix := "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n" + marker
	head := r.e.Head(http.MethodPost, "/u/"+tok, "", stormBody, "Content-Type: multipart/form-data; boundary="+b)
	return &slowConn{head: strings.Replace(head, "Connection: close\r\n", "", 1), prefix: prefix, filler: 'x', sh: wire.ShapeAPI}
}

// tallyStorm puts a storm's outcome on its row: answers are judged (a 503
// with a clear body is a clear refusal under load), connections still
// open at the end count as accepted, ones the server closed as rejected.
func (r *runner) tallyStorm(row *row, conns []*slowConn, t stormTally) {
	row.inputs += len(conns)
	row.accepted += t.open
	row.clear += t.closed
	problems := map[string]int{} // one finding per distinct problem, with its count
	for _, sc := range conns {
		if sc.answer == nil {
			continue
		}
		switch v, why := r.judgeStorm(sc); v {
		case wire.Clear:
			row.clear++
		case wire.Accepted:
			row.accepted++
		case wire.ServerError:
			row.server++
			problems["server error: "+why]++
		default:
			row.unclear++
			problems["unclear: "+why]++
		}
	}
	if t.dialFailed > 0 {
		row.unclear += t.dialFailed
		problems["the connection could not be opened"] += t.dialFailed
	}
	for p, n := range problems {
		r.rep.fail(row.key(), "storm", fmt.Sprintf("%d connections", n), p)
	}
}

// judgeStorm judges a storm connection's answer; a 503 with a clear body
// is a clear refusal under load.
func (r *runner) judgeStorm(sc *slowConn) (wire.Verdict, string) {
	a := sc.answer
	v, why := r.rules.Judge(sc.sh, false, a)
	if v == wire.ServerError && a.Status == http.StatusServiceUnavailable {
		if v2, _ := r.rules.Judge(sc.sh, false, &wire.Answer{Status: http.StatusTooManyRequests, Header: a.Header, Body: a.Body}); v2 == wire.Clear {
			return wire.Clear, ""
		}
	}
	return v, why
}

func (t stormTally) describe() string {
	var st []string
	for code, n := range t.statuses {
		st = append(st, fmt.Sprintf("%d× HTTP %d", n, code))
	}
	sort.Strings(st)
	s := fmt.Sprintf("%d opened, %d still open at the end, %d closed by the server without an answer, %d answered", t.opened, t.open, t.closed, t.answered)
	if len(st) > 0 {
		s += " (" + strings.Join(st, ", ") + ")"
	}
	return s
}

// settledRSS waits a moment after a storm and reads the RSS again (memory
// a server keeps after the connections are gone).
func (r *runner) settledRSS() string {
	time.Sleep(2 * time.Second)
	return mib(sysinfo.RSS(r.t.pid()))
}

// connectionStorm: a third of the connections stay idle, a third send
// request headers one byte per second and never finish them, a third make
// one request and stay kept-alive; meanwhile normal requests on new
// connections must keep succeeding.
func (r *runner) connectionStorm(ctx context.Context) error {
	c := r.cfg
	row := r.rep.row(r.t.name, fmt.Sprintf("storm: %d connections", c.connStorm))
	row.storm = true
	var conns []*slowConn
	for i := range c.connStorm {
		switch i % 3 {
		case 0:
			conns = append(conns, &slowConn{sh: wire.ShapeAPI})
		case 1:
			conns = append(conns, &slowConn{head: fmt.Sprintf("GET /v1/blobs HTTP/1.1\r\nHost: %s\r\nX-Slow: ", r.t.addr), filler: 'a', sh: wire.ShapeAPI})
		default:
			conns = append(conns, &slowConn{head: fmt.Sprintf("GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", r.t.addr), sh: wire.ShapeAPI, keep: true})
		}
	}
	r.mon.phase(row.key())
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var ok, bad atomic.Int64
	var firstBad atomic.Value
	wg.Go(func() { r.normalLoad(sctx, &ok, &bad, &firstBad) })
	t := runConns(ctx, r.t.addr, conns, time.Second, c.connHold)
	stop()
	wg.Wait()
	r.tallyStorm(row, conns, t)
	if n := bad.Load(); n > 0 {
		row.unclear += int(n)
		r.rep.fail(row.key(), "storm", "normal requests", fmt.Sprintf("%d of %d normal requests failed during the storm; the first: %v", n, n+ok.Load(), firstBad.Load()))
	}
	r.rep.note("%s: %s; %d normal requests (GET /v1/blobs/%s on new connections, 4 clients) succeeded meanwhile; RSS %s after", row.key(), t.describe(), ok.Load(), hostile.BaseText, r.settledRSS())
	return r.afterBatch(ctx, row, "storm")
}

// normalLoad sends GET of the baseline object on new connections, from 4
// clients each pausing 50 ms between requests (a modest load: the storm
// is the connections, not these), until ctx ends.
func (r *runner) normalLoad(ctx context.Context, ok, bad *atomic.Int64, first *atomic.Value) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}, Timeout: 5 * time.Second}
			for ctx.Err() == nil {
				req := r.e.Request(context.WithoutCancel(ctx), http.MethodGet, "/v1/blobs/"+hostile.BaseText, "alice", nil)
				resp, err := hc.Do(req)
				if err == nil {
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK && n == hostile.BaseSize {
						ok.Add(1)
						time.Sleep(50 * time.Millisecond)
						continue
					}
					err = fmt.Errorf("HTTP %d, %d bytes", resp.StatusCode, n)
				}
				bad.Add(1)
				first.CompareAndSwap(nil, err.Error())
			}
		})
	}
	wg.Wait()
}
