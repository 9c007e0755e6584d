package gateway

import (
	"net/http"
	"slices"
	"testing"
)

// The headers a Connection header lists stay behind with the hop's own;
// an answer's plain "Connection: keep-alive" costs no allocation.
func TestEachHeaderConnection(t *testing.T) {
	src := http.Header{"Connection": {"keep-alive, X-Hop", " close ,"}, "X-Hop": {"1"}, "Keep-Alive": {"timeout=5"},
		"Close": {"c"}, "X-Kept": {"2"}, "Content-Type": {"application/json"}}
	var got []string
	eachHeader(src, dropResponse, func(name string, _ []string) { got = append(got, name) })
	slices.Sort(got)
	if want := []string{"Content-Type", "X-Kept"}; !slices.Equal(got, want) {
		t.Errorf("relayed %q, want %q", got, want)
	}
	kept := http.Header{"Connection": {"keep-alive"}, "Content-Type": {"text/event-stream"}, "Mcp-Session-Id": {"s"}}
	names := 0
	count := func(string, []string) { names++ }
	if a := testing.AllocsPerRun(100, func() { eachHeader(kept, dropResponse, count) }); a != 0 {
		t.Errorf("%.0f allocations for an answer with Connection: keep-alive, want none", a)
	}
	if names == 0 {
		t.Error("no header relayed")
	}
}

// The upstream request of a client's usual headers is built with a map
// of one group, not one sized past it for the names it drops.
func TestNewUpstreamRequestAllocations(t *testing.T) {
	g := newGateway(t, "http://127.0.0.1:1/mcp", func(o *Options) { o.Token, o.PrincipalMode = "", PrincipalOff }) // as G1 runs it
	in := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Session-Id": {"s"}, "Mcp-Protocol-Version": {"2025-11-25"}, "User-Agent": {"sdk"},
		"Accept-Encoding": {"gzip"}, "Content-Length": {"42"}, "Authorization": {"Bearer k"}}
	var req *http.Request
	allocs := testing.AllocsPerRun(100, func() { req = g.newUpstreamRequest(t.Context(), http.MethodPost, in, nil, 0, "alice") })
	if len(req.Header) != 6 || req.Header.Get("Authorization") != "" {
		t.Fatalf("upstream headers %v", req.Header)
	}
	t.Logf("%.0f allocations", allocs)
	if allocs > 3 {
		t.Errorf("%.0f allocations to build an upstream request, want at most 3", allocs)
	}
}
