package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// TestMetricsAfterKnownSequence runs `mcpblob serve` as `make run` does (an
// open loopback node), makes a known sequence of requests on every plane
// and checks /metrics counts exactly those, and that the access log has a
// line per request with its request id.
func TestMetricsAfterKnownSequence(t *testing.T) {
	addr := freePort(t)
	logs := startServerAt(t, addr, "--data", t.TempDir(), "--log-format", "json")
	c := &seqClient{t: t, base: "http://" + addr, bodyLen: map[string]int{}}

	c.do("PUT", "/v1/blobs/m.txt", "hello metrics", map[string]string{"Content-Type": "text/plain", "X-Request-Id": "seq-put-1"})
	c.do("GET", "/v1/blobs/m.txt", "", nil)
	missing := c.do("GET", "/v1/blobs/nope", "", nil)
	c.mcp("tools/list", `{}`)
	c.mcp("resources/read", `{"uri":"blob:///m.txt"}`)
	upload := `{"name":"upload_file","arguments":{"key":"u.bin","file":"data:application/octet-stream;base64,AAECAw=="}}`
	c.mcp("tools/call", upload, "Mcp-Param-Blob-Key", "u.bin")
	c.mcp("no/such-method", `{}`)
	c.legacyInitialize()
	link := c.do("POST", "/v1/links", `{"key":"m.txt"}`, map[string]string{"Content-Type": "application/json"})
	var l struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(link.body, &l); err != nil || l.URL == "" {
		t.Fatalf("POST /v1/links: %s", link.body)
	}
	c.do("GET", strings.TrimPrefix(l.URL, c.base), "", nil)

	m := c.scrape(func(m map[string]float64) bool { return m[`mcpblob_active_streams{kind="download"}`] == 0 })
	want := map[string]float64{
		`mcpblob_http_requests_total{route="v1-blob",method="PUT",code="201"}`:              1,
		`mcpblob_http_requests_total{route="v1-blob",method="GET",code="200"}`:              1,
		`mcpblob_http_requests_total{route="v1-blob",method="GET",code="404"}`:              1,
		`mcpblob_http_requests_total{route="mcp",method="POST",code="200"}`:                 4,
		`mcpblob_http_requests_total{route="mcp",method="POST",code="404"}`:                 1,
		`mcpblob_http_requests_total{route="v1-links",method="POST",code="201"}`:            1,
		`mcpblob_http_requests_total{route="download",method="GET",code="200"}`:             1,
		`mcpblob_http_request_duration_seconds_count{route="v1-blob"}`:                      3,
		`mcpblob_mcp_requests_total{method="tools/list",era="2026-07-28",outcome="ok"}`:     1,
		`mcpblob_mcp_requests_total{method="resources/read",era="2026-07-28",outcome="ok"}`: 1,
		`mcpblob_mcp_requests_total{method="tools/call",era="2026-07-28",outcome="ok"}`:     1,
		`mcpblob_mcp_requests_total{method="other",era="2026-07-28",outcome="error"}`:       1,
		`mcpblob_mcp_requests_total{method="initialize",era="2025-11-25",outcome="ok"}`:     1,
		`mcpblob_bytes_sent_total{plane="download"}`:                                        float64(13 + len(missing.body) + 13),
		`mcpblob_bytes_sent_total{plane="mcp-read"}`:                                        float64(c.mcpSent),
		`mcpblob_bytes_received_total{plane="upload"}`:                                      float64(13 + c.bodyLen["tools/call"]),
		`mcpblob_uploads_total{surface="control",outcome="ok"}`:                             1,
		`mcpblob_uploads_total{surface="mcp",outcome="ok"}`:                                 1,
		`mcpblob_storage_operations_total{backend="localfs",op="put",outcome="ok"}`:         2,
		`mcpblob_storage_operation_duration_seconds_count{backend="localfs",op="put"}`:      2,
		`mcpblob_sessions_active`:                 1,
		`mcpblob_active_streams{kind="sse"}`:      0,
		`mcpblob_active_streams{kind="listen"}`:   0,
		`mcpblob_active_streams{kind="upload"}`:   0,
		`mcpblob_active_streams{kind="download"}`: 0,
	}
	for series, v := range want {
		if got, ok := m[series]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, v)
		}
	}
	if m[`mcpblob_storage_operations_total{backend="localfs",op="stat",outcome="not_found"}`] < 1 {
		t.Errorf("the missing blob's stat was not counted as not_found")
	}
	build := fmt.Sprintf(`mcpblob_build_info{version=%q,go=%q,`, binaryVersion(t), runtime.Version())
	if !hasPrefixKey(m, build) {
		t.Errorf("no series starting %s", build)
	}
	for _, family := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if _, ok := m[family]; !ok {
			t.Errorf("collector family %s missing", family)
		}
	}
	// Lines are written in order, so once the download's line (the last of
	// the sequence) is out, so are the others; a count could be reached
	// with the start-up probe's line while the download's was held back.
	checkAccessLog(t, logs.waitFor(func(log string) bool { return strings.Contains(log, `"route":"download"`) }), l.URL)
}

// checkAccessLog: one JSON line per request; the client's request id is
// kept; no token of a /d link is logged.
func checkAccessLog(t *testing.T, logs, link string) {
	t.Helper()
	var put map[string]any
	n := 0
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["msg"] != "request" {
			continue
		}
		n++
		if line["request_id"] == "seq-put-1" {
			put = line
		}
	}
	if n < 11 {
		t.Errorf("%d access-log lines, want at least the 11 requests made", n)
	}
	if put == nil || put["route"] != "v1-blob" || put["status"] != float64(201) || put["bytes_in"] != float64(13) {
		t.Errorf("access log line of the PUT: %v", put)
	}
	token := link[strings.LastIndex(link, "/")+1:]
	if strings.Contains(logs, token) {
		t.Errorf("a download link's token reached the log")
	}
}

// TestAdminListener: with --admin-listen, /metrics and /debug/pprof/ are on
// the admin address only, and only for a Host that a DNS-rebinding page
// cannot send (71946bf served the command line to Host attacker.example).
func TestAdminListener(t *testing.T) {
	addr, admin := freePort(t), freePort(t)
	startServerAt(t, addr, "--data", t.TempDir(), "--admin-listen", admin)
	port := admin[strings.LastIndexByte(admin, ':')+1:]
	for _, tc := range []struct {
		url  string
		host string
		want int
	}{
		{"http://" + addr + "/metrics", "", http.StatusNotFound},
		{"http://" + addr + "/debug/pprof/", "", http.StatusNotFound},
		{"http://" + admin + "/metrics", "", http.StatusOK},
		{"http://" + admin + "/debug/pprof/", "", http.StatusOK},
		{"http://" + admin + "/debug/pprof/goroutine?debug=1", "", http.StatusOK},
		{"http://" + admin + "/metrics", "localhost:" + port, http.StatusOK},
		{"http://" + admin + "/debug/pprof/cmdline", "attacker.example:" + port, http.StatusForbidden},
		{"http://" + admin + "/metrics", "attacker.example", http.StatusForbidden},
	} {
		req, err := http.NewRequest("GET", tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s (Host %q): %d, want %d", tc.url, tc.host, resp.StatusCode, tc.want)
		}
		if strings.HasSuffix(tc.url, "/metrics") && tc.want == http.StatusOK && !strings.Contains(string(body), "mcpblob_build_info") {
			t.Errorf("admin /metrics has no mcpblob_build_info")
		}
	}
}

// TestAdminToken: with MCPBLOB_ADMIN_TOKEN every admin route needs the
// bearer (401 and a challenge without it), --admin-hosts adds a Host
// name, and the token never reaches the log.
func TestAdminToken(t *testing.T) {
	const tok = "e2e-admin-token-9b1f3c7d5a"
	t.Setenv("MCPBLOB_ADMIN_TOKEN", tok)
	addr, admin := freePort(t), freePort(t)
	logs := startServerAt(t, addr, "--data", t.TempDir(), "--admin-listen", admin, "--admin-hosts", "metrics.internal, other.internal")
	send := func(path, host, authz string) *http.Response {
		req, _ := http.NewRequest("GET", "http://"+admin+path, nil)
		if host != "" {
			req.Host = host
		}
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline"} {
		for _, authz := range []string{"", "Bearer nope", "Basic " + tok} {
			if r := send(path, "", authz); r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("GET %s with %q: %d, WWW-Authenticate %q; want 401", path, authz, r.StatusCode, r.Header.Get("WWW-Authenticate"))
			}
		}
		if r := send(path, "", "Bearer "+tok); r.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the token: %d", path, r.StatusCode)
		}
	}
	if r := send("/metrics", "metrics.internal:9090", "Bearer "+tok); r.StatusCode != http.StatusOK {
		t.Errorf("a Host of --admin-hosts: %d", r.StatusCode)
	}
	if r := send("/metrics", "attacker.example", "Bearer "+tok); r.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: %d, want 403", r.StatusCode)
	}
	if strings.Contains(logs.String(), tok) {
		t.Errorf("the admin token reached the log")
	}
}

type seqClient struct {
	t       *testing.T
	base    string
	mcpSent int            // bytes of /mcp answers received
	bodyLen map[string]int // request body length by MCP method
}

type seqResp struct {
	status int
	body   []byte
}

func (c *seqClient) do(method, path, body string, hdr map[string]string) seqResp {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if id := hdr["X-Request-Id"]; id != "" && resp.Header.Get("X-Request-Id") != id {
		c.t.Errorf("X-Request-Id %q came back as %q", id, resp.Header.Get("X-Request-Id"))
	}
	if resp.Header.Get("X-Request-Id") == "" {
		c.t.Errorf("%s %s: no X-Request-Id in the response", method, path)
	}
	return seqResp{resp.StatusCode, b}
}

// mcp sends a 2026-07-28 request of method with params; extra are header
// name, value pairs (Mcp-Param-*).
func (c *seqClient) mcp(method, params string, extra ...string) {
	c.t.Helper()
	hdr := map[string]string{}
	for i := 0; i+1 < len(extra); i += 2 {
		hdr[extra[i]] = extra[i+1]
	}
	mc := mcptest.New(c.base+"/mcp", mcptest.Version20260728).With(hdr)
	req := mc.NewRequest(context.Background(), method, params)
	c.bodyLen[method] = int(req.ContentLength)
	r := c.send(mc, req)
	if r.Status != http.StatusOK && method != "no/such-method" {
		c.t.Errorf("%s: %d %s", method, r.Status, r.Body)
	}
}

// legacyInitialize sends a 2025-11-25 initialize (and no
// notifications/initialized: the metrics count one request).
func (c *seqClient) legacyInitialize() {
	c.t.Helper()
	mc := mcptest.New(c.base+"/mcp", mcptest.Version20251125)
	r := c.send(mc, mc.NewRequest(context.Background(), "initialize",
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"seq","version":"1"}}`))
	if r.Status != http.StatusOK {
		c.t.Fatalf("initialize: %d %s", r.Status, r.Body)
	}
}

// send sends an /mcp request, counts the answer's bytes and checks it has a
// request id.
func (c *seqClient) send(mc *mcptest.Client, req *mcptest.Request) *mcptest.Response {
	c.t.Helper()
	r, err := mc.Send(req)
	if err != nil {
		c.t.Fatal(err)
	}
	c.mcpSent += len(r.Body)
	if r.Header.Get("X-Request-Id") == "" {
		c.t.Errorf("POST /mcp %s: no X-Request-Id in the response", req.Method)
	}
	return r
}

// scrape reads /metrics until ready holds (at most 5 s) and returns each
// series' value by its name and labels.
func (c *seqClient) scrape(ready func(map[string]float64) bool) map[string]float64 {
	c.t.Helper()
	var m map[string]float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(c.base + "/metrics")
		if err != nil {
			c.t.Fatal(err)
		}
		m = parseExposition(resp.Body)
		resp.Body.Close()
		if ready(m) || time.Now().After(deadline) {
			return m
		}
	}
}

func parseExposition(r io.Reader) map[string]float64 {
	m := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

func hasPrefixKey(m map[string]float64, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// binaryVersion is the version the test binary of mcpblob reports (`mcpblob
// version`): "devel" when built without VCS stamping, a pseudo-version from
// the checkout's commit when the go command stamps one (its default in a git
// clone), "devel-<revision>" when only the revision is known.
func binaryVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(mcpblobBin, "version").Output()
	if err != nil {
		t.Fatalf("mcpblob version: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "mcpblob" {
		t.Fatalf("mcpblob version printed %q", out)
	}
	return f[1]
}
