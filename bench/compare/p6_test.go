package main

import (
	"encoding/json"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

func TestParseWrkReadsTheScriptsLine(t *testing.T) {
	out := "Running 1s test\n  1 threads and 16 connections\np6wrk requests=20000 duration_us=2000000 p50_us=700 p99_us=3400 max_us=9000 non200=2 rpc_errors=3 connect=0 read=1 write=0 timeout=4\n"
	w, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if w.requests != 20000 || w.seconds != 2 || w.p99 != 3.4 || w.p50 != 0.7 || w.non200 != 2 || w.rpcErrors != 3 || w.sockErrors != 5 {
		t.Errorf("parsed %+v", w)
	}
	if w.valid() || w.sockDetail != "connect 0, read 1, write 0, timeout 4" {
		t.Errorf("a run with bad answers is valid, or its socket errors are %q", w.sockDetail)
	}
	for _, bad := range []string{"Requests/sec: 100\n", "p6wrk requests=1 duration_us=1\n", "p6wrk requests=x duration_us=1\n"} {
		if _, err := parseWrk(bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// p6Fixture is a saturation result: mcpblob reads at 10,000 req/s, the
// floor at 20,000, nginx at 30,000, go-sdk at 2,500, over three rounds.
func p6Fixture() *p6Saturation {
	run := func(rps float64) wrkRun {
		return wrkRun{requests: int64(rps * 8), seconds: 8, rps: rps, p50: 1, p99: 4, coreBusy: 1, serverCores: 0.85, coreIRQ: 0.1, wrkCores: 0.4}
	}
	rows := map[string]float64{p6RowRead: 10000, p6RowList: 19000, p6RowKey: 17000, p6RowOAuth: 16800, p6RowModern: 16500, p6RowGoSDK: 2500, p6RowFloor: 20000, p6RowNginx: 30000}
	s := &p6Saturation{rounds: 3, seconds: 8}
	for _, name := range []string{p6RowRead, p6RowList, p6RowKey, p6RowOAuth, p6RowModern, p6RowGoSDK, p6RowFloor, p6RowNginx} {
		sys := &system{name: strings.Fields(name)[0]}
		s.rows = append(s.rows, &p6Row{name: name, system: sys, runs: []wrkRun{run(rows[name]), run(rows[name]), run(rows[name])}})
	}
	return s
}

func TestP6TargetRatiosAndWhyLines(t *testing.T) {
	r := &report{p6sat: p6Fixture()}
	tg := r.p6Target()
	if len(tg.Pairs) != len(p6Pairs) {
		t.Fatalf("%d pairs", len(tg.Pairs))
	}
	met := map[string]bool{}
	for _, p := range tg.Pairs {
		met[p.Label] = p.Met()
	}
	// read 0.5× floor (want 0.8), 0.33× nginx (0.5), 4× go-sdk (5): missed;
	// tools/list 0.95× floor (0.9), key 0.85×, 2026-07-28 0.825× (0.8): met.
	for label, want := range map[string]bool{"resources/read ÷ fasthttp floor": false, "resources/read ÷ nginx": false, "resources/read ÷ go-sdk": false,
		"tools/list ÷ fasthttp floor": true, "read with an API key ÷ fasthttp floor": true, "read with an OAuth token ÷ fasthttp floor": true, "read in 2026-07-28 ÷ fasthttp floor": true} {
		if met[label] != want {
			t.Errorf("%s met %v, want %v", label, met[label], want)
		}
	}
	if render.Verdict(tg) != "**missed**" || len(tg.Why) != 3 {
		t.Fatalf("verdict %s, %d why lines: %q", render.Verdict(tg), len(tg.Why), tg.Why)
	}
	// The floor line: 100 µs per read, the floor 50 µs, 0.8× leaves 62.5 µs.
	if w := tg.Why[0]; !strings.Contains(w, "spends 100.0 µs per request") || !strings.Contains(w, "leaves mcpblob 62.5 µs, so 37.5 µs (38 %) has to go") || !strings.Contains(w, "on top of the same front end is 50.0 µs") {
		t.Errorf("floor why line: %s", w)
	}
	// 0.5× nginx allows 66.7 µs, above the floor's 50 µs.
	if w := tg.Why[1]; !strings.Contains(w, "The 67 µs it allows is 17 µs above the fasthttp floor's 50 µs") || strings.Contains(w, "CPU 0") {
		t.Errorf("nginx why line: %s", w)
	}
	// Other processes on the server CPU, or an idle one: the line says so.
	for i := range r.p6sat.row(p6RowRead).runs {
		r.p6sat.row(p6RowRead).runs[i].serverCores = 0.55
		r.p6sat.row(p6RowFloor).runs[i].coreBusy = 0.7
	}
	w := r.p6Target().Why[0]
	if !strings.Contains(w, "Other processes took 35 % of CPU 0 under "+p6RowRead+" (the server 55 %, interrupts 10 %)") || !strings.Contains(w, "CPU 0 was idle 30 % of the time under "+p6RowFloor) {
		t.Errorf("busy note: %s", w)
	}
}

func TestP6InvalidRoundIsLeftOutAndMisses(t *testing.T) {
	s := p6Fixture()
	for i := range s.row(p6RowRead).runs {
		s.row(p6RowRead).runs[i].rps = 20000 // 1× the floor, 0.67× nginx, 8× go-sdk: every pair met
	}
	tg := (&report{p6sat: s}).p6Target()
	if !tg.Met() {
		t.Fatalf("fixture ×4 should meet every pair: %q %v", tg.Why, tg.Errors)
	}
	s.row(p6RowList).runs[1].rpcErrors = 7
	s.row(p6RowList).runs[1].rps = 1e9 // an erroring round must not count
	tg = (&report{p6sat: s}).p6Target()
	if tg.Met() || tg.Bounds[1].Value != 7 || len(tg.Errors) != 1 || !strings.Contains(tg.Errors[0], "round 2: 0 answers not 200, 7 without a JSON-RPC result") {
		t.Fatalf("met %v, bad answers %v, errors %q", tg.Met(), tg.Bounds[1].Value, tg.Errors)
	}
	if got := s.rps(p6RowList); got[1] != 0 {
		t.Errorf("the invalid round's req/s is kept: %v", got)
	}
	lo, med, hi, _ := pair.Stats(render.Positive(tg.Pairs[2].Ratios()))
	if lo != hi || med != lo {
		t.Errorf("tools/list ratio spread %v–%v: the invalid round was counted", lo, hi)
	}
	s.row(p6RowRead).runs[0].p99, s.row(p6RowRead).runs[1].p99 = 30, 25
	tg = (&report{p6sat: s}).p6Target()
	if tg.Bounds[0].Value != 25 || !strings.Contains(tg.Bounds[0].Label, p6RowRead) {
		t.Errorf("p99 bound %+v", tg.Bounds[0])
	}
	if w := strings.Join(tg.Why, "\n"); !strings.Contains(w, "p99 25.0 ms ≥ 10 ms on "+p6RowRead) || !strings.Contains(w, "P6: "+p6RowList+" round 2") {
		t.Errorf("why lines miss the p99 or the invalid round: %s", w)
	}
}

// wrkServer is an MCP endpoint for the script test: it checks each POST's
// headers and JSON-RPC id (unique), and answers every 5th with 500 and
// every 3rd other with a JSON-RPC error, counting what it sent.
type wrkServer struct {
	mu                     sync.Mutex
	ids                    map[float64]bool
	served, non200, rpcErr int
	problems               []string
}

func (s *wrkServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     *float64       `json:"id"`
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served++
	problem := ""
	switch {
	case json.Unmarshal(body, &msg) != nil || msg.ID == nil:
		problem = "body " + string(body)
	case s.ids[*msg.ID]:
		problem = "id used twice"
	case r.Method != http.MethodPost || r.Header.Get("MCP-Protocol-Version") == "":
		problem = "method or protocol header"
	case r.Header.Get("Mcp-Session-Id") != "sid-1" && r.Header.Get("Mcp-Method") != msg.Method:
		problem = "neither the session nor Mcp-Method"
	case r.Header.Get("Mcp-Method") != "" && (r.Header.Get("Mcp-Name") != msg.Params["uri"] || msg.Params["_meta"] == nil || r.Header.Get("Mcp-Session-Id") != ""):
		problem = "2026-07-28 request without Mcp-Name or _meta, or with a session"
	case r.Header.Get("Authorization") != "Bearer k1":
		problem = "no bearer"
	}
	if problem != "" && len(s.problems) < 5 {
		s.problems = append(s.problems, problem)
	}
	if msg.ID != nil {
		s.ids[*msg.ID] = true
	}
	switch {
	case s.served%5 == 0:
		s.non200++
		w.WriteHeader(http.StatusInternalServerError)
	case s.served%3 == 0:
		s.rpcErr++
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}`)
	default:
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`)
	}
}

// TestWrkScriptSendsMCPAndCountsBadAnswers drives the committed Lua script
// with the real wrk: fresh ids, the session or 2026-07-28 headers, and
// every answer that is not 200 or has no result counted.
func TestWrkScriptSendsMCPAndCountsBadAnswers(t *testing.T) {
	if why := p6Missing(2); why != "" {
		t.Fatalf("P6 needs wrk and taskset: %s", why)
	}
	script := filepath.Join(t.TempDir(), "p6.lua")
	if err := os.WriteFile(script, p6Lua, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, era := range []string{"session", "modern"} {
		srv := &wrkServer{ids: map[float64]bool{}}
		ts := httptest.NewServer(srv)
		sid, protocol := "sid-1", "2025-11-25"
		if era == "modern" {
			sid, protocol = "-", p6Modern
		}
		row := &p6Row{name: era, system: &system{}, url: ts.URL + "/mcp", args: []string{"mcp", "resources/read", `{"uri":"blob:///k"}`, protocol, sid, "k1", era}}
		w, err := runWrk(t.Context(), script, row, 1)
		ts.Close()
		if err != nil {
			t.Fatal(err)
		}
		srv.mu.Lock()
		if len(srv.problems) > 0 || w.requests < 100 || w.sockErrors != 0 {
			t.Errorf("%s: server saw %q; wrk %+v", era, srv.problems, w)
		}
		// wrk counts the answers it got; at most the 16 in flight at the end are cut.
		if w.firstBad != "500" && !strings.HasPrefix(w.firstBad, `200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602`) { // the 500 has no body
			t.Errorf("%s: first bad answer %q", era, w.firstBad)
		}
		if w.non200 > int64(srv.non200) || w.non200 < int64(srv.non200)-p6Conns || w.rpcErrors > int64(srv.rpcErr) || w.rpcErrors < int64(srv.rpcErr)-p6Conns {
			t.Errorf("%s: wrk counted %d not 200 and %d JSON-RPC errors, the server sent %d and %d", era, w.non200, w.rpcErrors, srv.non200, srv.rpcErr)
		}
		srv.mu.Unlock()
	}
}

func TestWrkScriptCountsNon200OnGET(t *testing.T) {
	if why := p6Missing(2); why != "" {
		t.Fatalf("P6 needs wrk and taskset: %s", why)
	}
	script := filepath.Join(t.TempDir(), "p6.lua")
	if err := os.WriteFile(script, p6Lua, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	w, err := runWrk(t.Context(), script, &p6Row{system: &system{}, url: ts.URL + "/f", args: []string{"get"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.requests == 0 || w.non200 != w.requests || w.valid() {
		t.Errorf("GETs answered 404: wrk %+v", w)
	}
}

// The tracing line compares the traced read's server CPU per request with
// the plain read's, and is absent when the traced row was not measured.
func TestP6TracingCost(t *testing.T) {
	s := p6Fixture()
	if line := s.tracingCost(); line != "" {
		t.Fatalf("no traced row, yet: %s", line)
	}
	for _, r := range s.rows {
		if r.name == p6RowRead {
			for i := range r.runs {
				r.runs[i].serverUS = 50
			}
		}
	}
	traced := &p6Row{name: p6RowTraced, system: &system{name: "mcpblob"}}
	for range 3 {
		traced.runs = append(traced.runs, wrkRun{requests: 64000, seconds: 8, rps: 8000, serverUS: 60})
	}
	s.rows = append(s.rows, traced)
	if line := s.tracingCost(); !strings.Contains(line, "60.0 µs against 50.0 µs with tracing off, +10.0 µs (+20 %)") {
		t.Errorf("tracing line: %s", line)
	}
}

// The row with tracing on is not held to the p99 bound: it is the cost
// of tracing, shown beside the rows with their targets.
func TestP6TracedRowNotInP99(t *testing.T) {
	s := p6Fixture()
	traced := &p6Row{name: p6RowTraced, system: &system{name: "mcpblob"}}
	for range 3 {
		traced.runs = append(traced.runs, wrkRun{requests: 64000, seconds: 8, rps: 8000, p99: 50})
	}
	s.rows = append(s.rows, traced)
	if name, p99 := s.worstP99(); name == p6RowTraced || p99 != 4 {
		t.Errorf("worstP99 = %s, %.0f ms; want an untraced row's 4 ms", name, p99)
	}
}
