package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// steady yields data in 4 KiB pieces at rate bytes per second (0: at once).
type steady struct {
	data []byte
	rate int
	sent int
	t0   time.Time
}

func (s *steady) Read(p []byte) (int, error) {
	if s.sent == len(s.data) {
		return 0, io.EOF
	}
	if s.t0.IsZero() {
		s.t0 = time.Now()
	}
	if s.rate > 0 {
		time.Sleep(time.Until(s.t0.Add(time.Duration(float64(s.sent) / float64(s.rate) * float64(time.Second)))))
	}
	n := copy(p[:min(len(p), 4<<10)], s.data[s.sent:])
	s.sent += n
	return n, nil
}

// honestUploads sends, as the honest principal, a PUT of size bytes and an
// upload_file of size bytes (key first, 2026-07-28), both at rate bytes per
// second, and returns what went wrong.
func honestUploads(srv *server, size, rate int) []string {
	var problems []string
	data := make([]byte, size)
	rand.Read(data)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	n := strconv.FormatInt(honestN.Add(1), 10)
	auth := map[string]string{"Authorization": "Bearer " + srv.honestKey}
	code, body, _, err := do(srv.base, "PUT", "/v1/blobs/honest/put-"+n, &steady{data: data, rate: rate}, auth)
	if err != nil || code != 201 || !strings.Contains(string(body), want) {
		problems = append(problems, fmt.Sprintf("PUT at %d B/s: %d %.200s %v", rate, code, body, err))
	}
	key := "honest/mcp-" + n
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{}},"name":"upload_file","arguments":{"key":"` + key +
		`","file":"data:application/octet-stream;base64,` + base64.StdEncoding.EncodeToString(data) + `"}}}`
	hdr := map[string]string{"Authorization": auth["Authorization"], "Content-Type": "application/json", "Accept": "application/json",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "upload_file", "Mcp-Param-Blob-Key": key}
	code, body, _, err = do(srv.base, "POST", "/mcp", &steady{data: []byte(msg), rate: rate * 4 / 3}, hdr)
	var res struct {
		Result struct {
			StructuredContent struct{ SHA256 string } `json:"structuredContent"`
		} `json:"result"`
	}
	if err != nil || json.Unmarshal(body, &res) != nil || res.Result.StructuredContent.SHA256 != want {
		problems = append(problems, fmt.Sprintf("upload_file at %d B/s: %d %.200s %v", rate*4/3, code, body, err))
	}
	return problems
}

func pct(ts []time.Duration, p float64) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	return ts[min(len(ts)-1, int(p*float64(len(ts))))]
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// print writes the result table.
func (r *result) print(o options) {
	by := map[string]map[int]int{}
	var longest time.Duration
	for _, c := range r.conns {
		if by[c.kind] == nil {
			by[c.kind] = map[int]int{}
		}
		by[c.kind][c.status]++
		longest = max(longest, c.life)
	}
	fmt.Printf("\n| measure | value |\n| --- | --- |\n")
	fmt.Printf("| connections opened (kept %d at a time) | %d |\n", o.conns, len(r.conns))
	fmt.Printf("| server RSS before / peak / 5 s after | %s / %s / %s |\n", mib(r.baseRSS), mib(r.peakRSS), mib(r.settledRSS))
	fmt.Printf("| peak RSS growth | %s |\n", mib(r.peakRSS-r.baseRSS))
	fmt.Printf("| /healthz before the storm (10 s): p50 / p99 / max | %v / %v / %v |\n", pct(r.quiet, 0.5).Round(time.Microsecond),
		pct(r.quiet, 0.99).Round(time.Microsecond), pct(r.quiet, 1).Round(time.Microsecond))
	fmt.Printf("| /healthz polls, failed | %d, %d |\n", len(r.health), r.healthFailed)
	fmt.Printf("| /healthz p50 / p99 / max | %v / %v / %v |\n", pct(r.health, 0.5).Round(time.Microsecond),
		pct(r.health, 0.99).Round(time.Microsecond), pct(r.health, 1).Round(time.Microsecond))
	fmt.Printf("| longest trickling connection (open ones count) | %v (rule: at most %v) |\n", longest.Round(time.Millisecond), o.bound)
	for _, k := range slices.Sorted(maps.Keys(by)) {
		fmt.Printf("| answers, %s (status: count; 0 = open at the end) | %v |\n", k, by[k])
	}
	fmt.Printf("| honest slow uploads (12 KiB/s, 384 KiB) | %s |\n", map[bool]string{true: "ok", false: strings.Join(r.honest, "; ")}[len(r.honest) == 0])
}

// problems lists the failed criteria.
func (r *result) problems(o options) []string {
	var p []string
	if g := r.peakRSS - r.baseRSS; g >= o.maxRSS<<20 {
		p = append(p, fmt.Sprintf("peak RSS growth %s, want < %d MiB", mib(g), o.maxRSS))
	}
	if r.healthFailed > 0 || pct(r.health, 0.99) > o.health {
		p = append(p, fmt.Sprintf("/healthz: %d failed, p99 %v (want none, ≤ %v)", r.healthFailed, pct(r.health, 0.99), o.health))
	}
	p = append(p, r.honest...)
	for _, c := range r.conns {
		if c.life > o.bound {
			p = append(p, fmt.Sprintf("a %s connection lived %v", c.kind, c.life.Round(time.Millisecond)))
			break
		}
	}
	return p
}
