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
