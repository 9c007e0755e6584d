package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// kinds are the upload surfaces the storm trickles into, in the order
// connections are opened (interleaved, so each kind gets upload slots).
var kinds = []string{"mcp-chunked", "upload-endpoint", "put", "mcp-small"}

// target is what the storm's requests need.
type target struct {
	addr, key, sid string
	uploads        []string // /u/{token} paths
}

// request is the head and the fast part of one connection's body.
func (t *target) request(kind string, n int) string {
	h := "Host: " + t.addr + "\r\nAuthorization: Bearer " + t.key + "\r\n"
	fill := strings.Repeat("A", 8<<10) // past the 8 KiB fasthttp reads ahead
	mcp := "POST /mcp HTTP/1.1\r\n" + h + "Mcp-Session-Id: " + t.sid + "\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
		"Content-Type: application/json\r\nAccept: application/json\r\n"
	switch kind {
	case "mcp-chunked":
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"storm/` +
			strconv.Itoa(n) + `","file":"data:application/octet-stream;base64,` + fill
		return mcp + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n"
	case "mcp-small":
		return mcp + "Content-Length: 60000\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + fill + fill[:1000]
	case "upload-endpoint":
		return "POST " + t.uploads[n%len(t.uploads)] + " HTTP/1.1\r\n" + h +
			"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 10485760\r\n\r\n" +
			"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"s.bin\"\r\n\r\n" + fill
	}
	return "PUT /v1/blobs/storm/" + strconv.Itoa(n) + " HTTP/1.1\r\n" + h + "Content-Length: 10485760\r\n\r\n" + fill
}

// conn is what one storm connection saw.
type conn struct {
	kind   string
	life   time.Duration // until the server closed it, or the storm ended
	status int           // 0: no answer
	open   bool          // still open when the storm ended
}

// one runs a connection: the fast part, then a byte every o.every until
// the server closes it or the storm ends.
func (t *target) one(o options, kind string, n int, end time.Time) conn {
	res := conn{kind: kind}
	start := time.Now()
	c, err := net.DialTimeout("tcp", t.addr, 10*time.Second)
	if err != nil {
		return res
	}
	defer c.Close()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.SetReadDeadline(end.Add(time.Minute))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			res.status = resp.StatusCode
		}
	}()
	_, _ = io.WriteString(c, t.request(kind, n))
	piece := "A"
	if kind == "mcp-chunked" {
		piece = "1\r\nA\r\n"
	}
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			res.life = time.Since(start)
			return res
		case <-tick.C:
			if time.Now().After(end) {
				c.Close()
				<-closed
				res.life, res.open = time.Since(start), true
				return res
			}
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(c, piece)
		}
	}
}

// result is the outcome of a run.
type result struct {
	conns            []conn
	baseRSS, peakRSS int64
	settledRSS       int64
	health           []time.Duration // sorted
	healthFailed     int
	quiet            []time.Duration // /healthz before the storm, sorted: the machine's own noise
	honest           []string        // problems of the honest uploads
}

// storm runs the whole measurement against srv.
func storm(ctx context.Context, o options, srv *server) (*result, error) {
	t, err := prepare(srv, o.conns)
	if err != nil {
		return nil, err
	}
	r := &result{}
	if p := honestUploads(srv, 256<<10, 0); len(p) > 0 { // warm up, unhurried
		return nil, fmt.Errorf("before the storm: %v", p)
	}
	quiet := make(chan struct{})
	time.AfterFunc(10*time.Second, func() { close(quiet) })
	r.quiet, _ = pollHealth(srv.base, quiet)
	r.baseRSS = sysinfo.RSS(srv.p.PID())
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { r.peakRSS = peakRSS(srv.p.PID(), stop) })
	bg.Go(func() { r.health, r.healthFailed = pollHealth(srv.base, stop) })
	bg.Go(func() {
		time.Sleep(min(15*time.Second, o.duration/4))
		r.honest = honestUploads(srv, 384<<10, 12<<10)
	})
	r.conns = t.run(ctx, o)
	close(stop)
	bg.Wait()
	time.Sleep(5 * time.Second) // the closes settle
	r.settledRSS = sysinfo.RSS(srv.p.PID())
	return r, nil
}

// run keeps o.conns connections trickling until the storm ends.
func (t *target) run(ctx context.Context, o options) []conn {
	end := time.Now().Add(o.duration)
	var mu sync.Mutex
	var all []conn
	var wg sync.WaitGroup
	for i := range o.conns {
		kind := kinds[i%len(kinds)]
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 2 * time.Millisecond) // ramp up
			for n := i * 100000; time.Now().Before(end) && ctx.Err() == nil; n++ {
				c := t.one(o, kind, n, end)
				mu.Lock()
				all = append(all, c)
				mu.Unlock()
				time.Sleep(o.retry)
			}
		})
	}
	wg.Wait()
	return all
}

func peakRSS(pid int, stop <-chan struct{}) int64 {
	var peak int64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return peak
		case <-tick.C:
			peak = max(peak, sysinfo.RSS(pid))
		}
	}
}

// pollHealth asks /healthz every 100 ms on a kept-alive connection.
func pollHealth(base string, stop <-chan struct{}) ([]time.Duration, int) {
	hc := &http.Client{Timeout: 5 * time.Second}
	var times []time.Duration
	failed := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			slices.Sort(times)
			return times, failed
		case <-tick.C:
		}
		start := time.Now()
		resp, err := hc.Get(base + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			failed++
		}
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		times = append(times, time.Since(start))
	}
}

// prepare mints the storm principal's upload endpoints and session.
func prepare(srv *server, conns int) (*target, error) {
	t := &target{addr: srv.addr, key: srv.stormKey}
	auth := map[string]string{"Authorization": "Bearer " + srv.stormKey}
	for range min(conns/len(kinds)+1, 200) {
		code, body, _, err := do(srv.base, "POST", "/v1/uploads", strings.NewReader(`{"maxSize":20971520,"ttlSeconds":3600}`), auth)
		var up struct{ URL string }
		if err != nil || json.Unmarshal(body, &up) != nil || up.URL == "" {
			return nil, fmt.Errorf("POST /v1/uploads: %d %s %v", code, body, err)
		}
		t.uploads = append(t.uploads, up.URL[strings.Index(up.URL, "/u/"):])
	}
	hdr := map[string]string{"Authorization": auth["Authorization"], "Content-Type": "application/json", "Accept": "application/json"}
	_, body, h, err := do(srv.base, "POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slowstorm","version":"1"}}}`), hdr)
	if t.sid = h.Get("Mcp-Session-Id"); err != nil || t.sid == "" {
		return nil, fmt.Errorf("initialize: %s %v", body, err)
	}
	return t, nil
}

// do sends one request and returns the status, body and headers.
func do(base, method, path string, body io.Reader, hdr map[string]string) (int, []byte, http.Header, error) {
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header, err
}

var honestN atomic.Int64
