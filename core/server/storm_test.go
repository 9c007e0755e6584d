package server

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// Slow request bodies (hardening item 4): a bounded loopback storm of
// connections that trickle their bodies (a byte every 250 ms) into every
// upload surface, reconnecting when refused, while an honest client
// uploads slowly but steadily. The server must keep its heap flat, close
// every trickling connection under the minimum-rate rule, refuse uploads
// beyond the per-principal limit with 429 and Retry-After, serve the
// honest uploads, and answer /healthz quickly throughout.

// stormShape is one storm: how many connections of each kind, how long.
type stormShape struct {
	mcpChunked, mcpSmall, uploadEndpoint, put int
	duration                                  time.Duration
}

func (s stormShape) total() int { return s.mcpChunked + s.mcpSmall + s.uploadEndpoint + s.put }

// stormConn is what one storm connection saw.
type stormConn struct {
	kind   string
	life   time.Duration // from dial until the server closed it
	status int           // of the answer, 0 when none came
	retry  string        // its Retry-After
	open   bool          // still open when the storm ended
}

// stormTarget holds what the storm connections need from the server.
type stormTarget struct {
	addr, key, sid string
	uploads        []string // /u/{token} paths of the storm's principal
}

// request returns the head and the fast part of the body of one storm
// connection of kind; the rest trickles.
func (st *stormTarget) request(kind string, n int) string {
	h := "Host: " + st.addr + "\r\nAuthorization: Bearer " + st.key + "\r\n"
	fill := strings.Repeat("A", 8<<10)
	switch kind {
	case "mcp-chunked":
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"storm/` +
			strconv.Itoa(n) + `","file":"data:application/octet-stream;base64,` + fill
		return "POST /mcp HTTP/1.1\r\n" + h + "Mcp-Session-Id: " + st.sid + "\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
			"Content-Type: application/json\r\nAccept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n"
	case "mcp-small":
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + fill + fill[:1000]
		return "POST /mcp HTTP/1.1\r\n" + h + "Mcp-Session-Id: " + st.sid + "\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
			"Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: 60000\r\n\r\n" + body
	case "upload-endpoint":
		body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"s.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n" + fill
		return "POST " + st.uploads[n%len(st.uploads)] + " HTTP/1.1\r\n" + h +
			"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 10485760\r\n\r\n" + body
	}
	return "PUT /v1/blobs/storm/" + strconv.Itoa(n) + " HTTP/1.1\r\n" + h +
		"Content-Type: application/octet-stream\r\nContent-Length: 10485760\r\n\r\n" + fill
}

// trickle is the next piece of a body of kind: one byte (one chunk).
func trickle(kind string) string {
	if kind == "mcp-chunked" {
		return "1\r\nA\r\n"
	}
	return "A"
}

// stormOne runs one connection: the fast part, then a byte every 250 ms
// until the server closes the connection or the storm ends.
func stormOne(st *stormTarget, kind string, n int, end time.Time) stormConn {
	res := stormConn{kind: kind}
	start := time.Now()
	c, err := net.DialTimeout("tcp", st.addr, 5*time.Second)
	if err != nil {
		return res
	}
	defer c.Close()
	closed := make(chan struct{})
	go func() { // the answer, if any, and the close
		defer close(closed)
		_ = c.SetReadDeadline(end.Add(10 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			res.status, res.retry = resp.StatusCode, resp.Header.Get("Retry-After")
			io.Copy(io.Discard, resp.Body)
		}
		io.Copy(io.Discard, c)
	}()
	_, _ = io.WriteString(c, st.request(kind, n))
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			res.life = time.Since(start)
			return res
		case <-tick.C:
			if time.Now().After(end) {
				res.open, res.life = true, time.Since(start)
				c.Close()
				<-closed
				return res
			}
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, trickle(kind))
		}
	}
}

// runStorm keeps shape.total() trickling connections open until the end,
// each reconnecting a second after the server closed it.
func runStorm(st *stormTarget, shape stormShape) []stormConn {
	end := time.Now().Add(shape.duration)
	var mu sync.Mutex
	var all []stormConn
	var wg sync.WaitGroup
	kinds := stormKinds(shape)
	for i, kind := range kinds {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * time.Millisecond) // ramp up over shape.total() ms
			for n := i * 1000; time.Now().Before(end); n++ {
				r := stormOne(st, kind, n, end)
				mu.Lock()
				all = append(all, r)
				mu.Unlock()
				time.Sleep(time.Second)
			}
		})
	}
	wg.Wait()
	return all
}

// stormKinds lists the kind of each storm connection, interleaved so that
// every kind is among the first to ask for an upload slot.
func stormKinds(shape stormShape) []string {
	left := map[string]int{"mcp-chunked": shape.mcpChunked, "mcp-small": shape.mcpSmall,
		"upload-endpoint": shape.uploadEndpoint, "put": shape.put}
	var kinds []string
	for len(kinds) < shape.total() {
		for _, k := range []string{"mcp-chunked", "upload-endpoint", "put", "mcp-small"} {
			if left[k] > 0 {
				kinds = append(kinds, k)
				left[k]--
			}
		}
	}
	return kinds
}

// memWatch samples the heap in use and the process RSS every 20 ms until
// stopped and reports the peaks over the baselines.
type memWatch struct{ heap, rss *storagetest.Peak }

func rssBytes() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func startMemWatch() *memWatch {
	return &memWatch{
		heap: storagetest.WatchPeak(20*time.Millisecond, storagetest.HeapInuse),
		rss:  storagetest.WatchPeak(20*time.Millisecond, rssBytes),
	}
}

// end stops sampling and returns the peak growth of heap and RSS.
func (m *memWatch) end() (heap, rss int64) { return m.heap.Stop(), m.rss.Stop() }

// healthStats are the /healthz answers seen during a storm.
type healthStats struct {
	times  []time.Duration // sorted
	failed int
}

func (h healthStats) pct(p float64) time.Duration {
	if len(h.times) == 0 {
		return 0
	}
	return h.times[min(len(h.times)-1, int(p*float64(len(h.times))))]
}

func (h healthStats) String() string {
	return fmt.Sprintf("/healthz %d polls, %d failed, p50 %v, p95 %v, max %v", len(h.times), h.failed,
		h.pct(0.5).Round(time.Microsecond), h.pct(0.95).Round(time.Microsecond), h.pct(1).Round(time.Microsecond))
}

// healthWatch polls /healthz every 50 ms on a kept-alive connection and
// records how long each answer took and any failure.
func healthWatch(base string, stop <-chan struct{}) func() healthStats {
	var h healthStats
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 5 * time.Second}
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			start := time.Now()
			resp, err := hc.Get(base + "/healthz")
			if err != nil || resp.StatusCode != 200 {
				h.failed++
			}
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			h.times = append(h.times, time.Since(start))
		}
	})
	return func() healthStats { wg.Wait(); slices.Sort(h.times); return h }
}

// steadyBody yields data in 8 KiB pieces at rate bytes per second.
type steadyBody struct {
	data []byte
	rate int
	sent int
	t0   time.Time
}

func (s *steadyBody) Read(p []byte) (int, error) {
	if s.sent == len(s.data) {
		return 0, io.EOF
	}
	if s.t0.IsZero() {
		s.t0 = time.Now()
	}
	due := s.t0.Add(time.Duration(float64(s.sent) / float64(s.rate) * float64(time.Second)))
	time.Sleep(time.Until(due))
	n := copy(p[:min(len(p), 8<<10)], s.data[s.sent:])
	s.sent += n
	return n, nil
}

// honestUploads sends, as another principal, a PUT and an upload_file
// whose bodies arrive slowly but steadily (48 KiB/s, three times the
// test's minimum rate) and reports what went wrong.
func honestUploads(t *testing.T, c *bpClient, key string) []string {
	var problems []string
	data := randomBytes(160 << 10)
	auth := map[string]string{"Authorization": "Bearer " + key}
	r := c.do("PUT", "/v1/blobs/honest/steady.bin", &steadyBody{data: data, rate: 48 << 10}, auth)
	if r.status != http.StatusCreated || !strings.Contains(string(r.body), hexSum(data)) {
		problems = append(problems, fmt.Sprintf("steady PUT: %d %s", r.status, r.body))
	}
	m := newMCPClientWith(t, c.base, legacyVersion, `{}`, auth)
	payload := base64.StdEncoding.EncodeToString(data)
	body := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"honest/steady-mcp.bin","file":"data:application/octet-stream;base64,` + payload + `"}}}`
	// Chunked (size -1), as a client streaming a file would send it.
	if r := m.send(m.raw(&steadyBody{data: []byte(body), rate: 64 << 10}, -1)); outcomeOf(r.msg).key != "honest/steady-mcp.bin" {
		problems = append(problems, fmt.Sprintf("steady upload_file: %d %.300s", r.status, r.body))
	}
	return problems
}

// stormServer starts a server with a storm principal and an honest one and
// mints the storm's upload endpoints.
func stormServer(t *testing.T, shape stormShape) (*bpClient, *stormTarget, string, string) {
	stormKey, honestKey := "mcpb_storm"+rand.Text(), "mcpb_honest"+rand.Text()
	dir := t.TempDir()
	be := newLocalStoreAt(t, dir)
	opts := Options{
		Backend: be,
		Auth:    Auth{Keys: []string{HashKey(stormKey) + " storm", HashKey(honestKey) + " honest"}},
		Front:   front.Options{ReadTimeout: 3 * time.Second},
	}
	stormOptions(&opts)
	c := newBPClient(t, opts)
	st := &stormTarget{addr: strings.TrimPrefix(c.base, "http://"), key: stormKey}
	st.sid = newMCPClientWith(t, c.base, legacyVersion, `{}`, map[string]string{"Authorization": "Bearer " + stormKey}).sid
	for range max(shape.uploadEndpoint, 1) {
		r := c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":20971520,"ttlSeconds":600}`), map[string]string{"Authorization": "Bearer " + stormKey})
		var up struct{ URL string }
		if json.Unmarshal(r.body, &up); up.URL == "" {
			t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
		}
		st.uploads = append(st.uploads, up.URL[strings.Index(up.URL, "/u/"):])
	}
	// One honest round first, so the pools the storm would take from are
	// warm and the baseline is fair.
	if p := honestUploads(t, c, honestKey); len(p) > 0 {
		t.Fatalf("before the storm: %v", p)
	}
	return c, st, dir, honestKey
}

// TestSlowBodyStorm: 300 trickling connections (120 chunked upload_file
// calls, 60 small MCP bodies, 80 multipart /u uploads, 40 PUTs) for 6 s,
// 120 in all under -race or -short.
func TestSlowBodyStorm(t *testing.T) {
	heapTest(t) // it measures the process's heap and RSS, and /healthz latency
	shape := stormShape{mcpChunked: 120, mcpSmall: 60, uploadEndpoint: 80, put: 40, duration: 6 * time.Second}
	if raceEnabled || testing.Short() {
		shape = stormShape{mcpChunked: 48, mcpSmall: 24, uploadEndpoint: 32, put: 16, duration: 5 * time.Second}
	}
	c, st, dir, honestKey := stormServer(t, shape)
	stop := make(chan struct{})
	health := healthWatch(c.base, stop)
	mem := startMemWatch()
	var honest []string
	var hwg sync.WaitGroup
	hwg.Go(func() {
		time.Sleep(time.Second) // into the storm
		honest = honestUploads(t, c, honestKey)
	})
	conns := runStorm(st, shape)
	hwg.Wait()
	heap, rss := mem.end()
	close(stop)
	hs := health()
	checkStorm(t, conns, shape)
	for _, p := range honest {
		t.Errorf("honest slow-but-steady upload failed: %s", p)
	}
	runtime.GC()
	after := storagetest.HeapInuse() - mem.heap.Base()
	t.Logf("%d connections over %v: peak heap growth %.1f MiB, peak RSS growth %.1f MiB, heap after %.1f MiB; %v",
		len(conns), shape.duration, mib(heap), mib(rss), mib(after), hs)
	if heap > 64<<20 {
		t.Errorf("peak heap growth %.1f MiB, want ≤ 64 MiB", mib(heap))
	}
	// The p95, not the maximum: this machine's cores are shared, and a
	// single poll can wait for a CPU whatever the server does.
	if hs.failed > 0 || hs.pct(0.95) > healthBound() || hs.pct(1) > time.Second {
		t.Errorf("%v (want no failure, p95 ≤ %v, max ≤ 1s)", hs, healthBound())
	}
	checkNothingStored(t, c, dir)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// healthBound is the slowest /healthz answer allowed during the storm
// (the race detector slows everything down).
func healthBound() time.Duration {
	if raceEnabled {
		return 300 * time.Millisecond
	}
	return 100 * time.Millisecond
}

// checkStorm: no trickling connection outlived the rule; uploads beyond
// the storm principal's limit were refused with 429 and Retry-After; the
// ones admitted were cut off with 408.
func checkStorm(t *testing.T, conns []stormConn, shape stormShape) {
	t.Helper()
	statuses := map[string]map[int]int{}
	var longest time.Duration
	for _, c := range conns {
		if statuses[c.kind] == nil {
			statuses[c.kind] = map[int]int{}
		}
		statuses[c.kind][c.status]++
		longest = max(longest, c.life) // one still open at the end counts too
		if c.status == http.StatusTooManyRequests && c.retry == "" {
			t.Errorf("a %s connection got 429 without Retry-After", c.kind)
		}
	}
	t.Logf("answers by kind (status: count): %v; longest connection %v", statuses, longest.Round(time.Millisecond))
	if longest > 4*time.Second {
		t.Errorf("a trickling connection lived %v; the rule allows about 2 s here", longest.Round(time.Millisecond))
	}
	if statuses["put"][http.StatusTooManyRequests] == 0 || statuses["upload-endpoint"][http.StatusTooManyRequests] == 0 {
		t.Errorf("no upload was refused for the principal's limit: %v", statuses)
	}
	if statuses["mcp-small"][http.StatusRequestTimeout] == 0 || statuses["mcp-chunked"][http.StatusRequestTimeout] == 0 ||
		statuses["put"][http.StatusRequestTimeout]+statuses["upload-endpoint"][http.StatusRequestTimeout] == 0 {
		t.Errorf("a kind of slow body was never cut off with 408: %v", statuses)
	}
}

// checkNothingStored: the storm left no object and no temporary file in
// the store at dir.
func checkNothingStored(t *testing.T, c *bpClient, dir string) {
	t.Helper()
	for _, k := range listAll(t, c.srv.opts.Backend) {
		if strings.HasPrefix(k, "storm/") || strings.HasPrefix(k, "uploads/") {
			t.Errorf("the storm stored %q", k)
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, storage.ReservedDir, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %d", len(tmp))
	}
}
