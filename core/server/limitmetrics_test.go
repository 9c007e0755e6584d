package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// TestLimitMetrics: what the node holds of each kind of protocol state is
// the gauge mcpblob_protocol_state{kind}, and every refusal by a limit
// counts in mcpblob_limit_refusals_total{limit,scope}, with no principal
// label.
func TestLimitMetrics(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{MCP: mcp.Options{Limits: limits.Limits{StreamsPerPrincipal: 1}}})
	c := newMCPClientWith(t, base, modernVersion, `{}`, nil)
	listen := func() (*openStream, *mcpResponse) {
		return c.openListen(c.request("subscriptions/listen", `{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["blob:///a","blob:///b"]}}`))
	}
	held, refused := listen()
	if held == nil {
		t.Fatalf("the first listen: %d %.300s", refused.status, refused.body)
	}
	defer held.close()
	for range 2 {
		_, refused = listen()
		checkLimitRefusal(t, "a second stream", refused, "streams", "principal")
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`mcpblob_limit_refusals_total{limit="streams",scope="principal"} 2`,
		`mcpblob_protocol_state{kind="streams"} 1`,
		`mcpblob_protocol_state{kind="subscriptions"} 2`,
		`mcpblob_protocol_state{kind="subscription_bytes"} 18`,
		`mcpblob_protocol_state{kind="sessions"} 0`,
	} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(string(b), "principal=") {
		t.Error("a metric is labelled with a principal")
	}
}
