package gateway

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A tools/call answered as SSE whose upstream asks the client something
// midway (elicitation) and waits for the answer: each event must reach the
// client as it arrives, offloading on or off, or client and upstream wait
// for each other until a timeout.
func TestOffloadSSEEventsFlow(t *testing.T) {
	for _, over := range []int64{0, 1 << 20} {
		release := make(chan struct{})
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{}}\n\n"))
			w.(http.Flusher).Flush()
			<-release
			_, _ = w.Write([]byte("event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}\n\n"))
		}))
		g := newGateway(t, up.URL, func(o *Options) {
			if over > 0 {
				o.Offload = OffloadOptions{Over: over, Store: newFileOffloads(t)}
			}
		})
		gw := serveAs(t, g)
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("X-Test-Principal", "alice")
		got := make(chan string, 1)
		go func() { got <- firstEvent(req) }()
		select {
		case ev := <-got:
			if !strings.Contains(ev, "elicitation/create") {
				t.Errorf("offload over %d: first event %q", over, ev)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("offload over %d: the upstream's first event did not reach the client while the upstream waited", over)
		}
		close(release)
		up.Close()
	}
}

// firstEvent sends req and reads the first SSE event of its answer.
func firstEvent(req *http.Request) string {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if line == "\n" || err != nil {
			return ev.String()
		}
	}
}
