package server

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// A finding of the state-exhaustion work: subscriptions/listen kept each stream's request
// (the whole body, its decoded URIs, their map) for the stream's life,
// about 16 MiB for a 3.7 MiB body of 480 URIs of 8 KiB, and only
// --max-conns bounded the streams: 150 of them took the node from 18 MiB
// to 2.4 GiB. Now a stream keeps its set of URIs only, charged to the
// principal's subscription budgets, and takes one open stream.

// listenURIs is the body of the attack: 480 URIs of 8,000 bytes (3.66
// MiB), none of a blob that exists, under the 4 MiB body limit.
const listenURIs, listenURIBytes = 480, 8000

// budgetClient is a client of version for principal, whose key the server
// accepts with the blobs:read scope only.
func budgetClient(t *testing.T, base, version, key string) *mcpClient {
	t.Helper()
	return newMCPClientWith(t, base, version, `{}`, map[string]string{"Authorization": "Bearer " + key})
}

// serveBudgeted starts a server with limits lim whose keys are one per
// principal given; it returns the base URL and the keys by principal.
func serveBudgeted(t *testing.T, lim limits.Limits, principals ...string) (string, map[string]string) {
	t.Helper()
	keys, lines := map[string]string{}, []string(nil)
	for _, p := range principals {
		keys[p] = "mcpb_" + p + rand.Text()
		lines = append(lines, auth.KeyLine(keys[p], p, []string{"blobs:read"}))
	}
	base, _ := startTestServer(t, Options{MCP: mcp.Options{Limits: lim, KeepAlive: 20 * time.Millisecond}, Auth: Auth{Keys: lines}})
	return base, keys
}

// listenBody is a whole subscriptions/listen message subscribing to n
// URIs of size bytes each (built once: every request reads the same
// string, so the test's own heap does not grow with the streams).
func listenBody(c *mcpClient, n, size int) string {
	uris := make([]string, n)
	for i := range uris {
		head := fmt.Sprintf("blob:///missing/%04d/", i)
		uris[i] = jsonString(head + strings.Repeat("u", size-len(head)))
	}
	params := c.meta(`{"notifications":{"resourcesListChanged":true,"resourceSubscriptions":[` + strings.Join(uris, ",") + `]}}`)
	return `{"jsonrpc":"2.0","id":"listen","method":"subscriptions/listen","params":` + params + `}`
}

// listenRequest is the POST of body, a subscriptions/listen message.
func (c *mcpClient) listenRequest(body string) *mcpRequest {
	r := c.raw(strings.NewReader(body), int64(len(body)))
	r.Header.Set("Mcp-Method", "subscriptions/listen")
	r.method = "subscriptions/listen"
	return r
}

// openStream is a notification stream the server accepted, open until
// close (or the test's end).
type openStream struct {
	*sseStream
	body io.ReadCloser
}

func (s *openStream) close() { s.body.Close() }

// openSSE sends r and returns its stream when the server answers with
// SSE, or nil and the refusal read whole.
func (c *mcpClient) openSSE(r *mcpRequest) (*openStream, *mcpResponse) {
	c.t.Helper()
	resp := c.do(r)
	if mediaType(resp.Header) != "text/event-stream" {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			c.t.Fatalf("%s: reading the refusal: %v", r.label(), err)
		}
		out := &mcpResponse{httpResp: httpResp{resp.StatusCode, resp.Header, body}, t: c.t, req: r}
		_ = json.Unmarshal(body, &out.msg)
		return nil, out
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	return &openStream{newSSEStream(c.t, resp.Body, r), resp.Body}, nil
}

// openListen is openSSE of a listen request whose stream must begin with
// the acknowledgement.
func (c *mcpClient) openListen(r *mcpRequest) (*openStream, *mcpResponse) {
	c.t.Helper()
	s, refused := c.openSSE(r)
	if s != nil {
		if m, ok := s.next(); !ok || m.Method != "notifications/subscriptions/acknowledged" {
			c.t.Fatalf("listen: want the acknowledgement, got %+v (ok=%v)", m, ok)
		}
	}
	return s, refused
}

// liveHeap is the heap's live bytes after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// checkLimitRefusal checks r is the JSON-RPC refusal of limit in scope:
// -32029, HTTP 429 (principal) or 503 (node), Retry-After.
func checkLimitRefusal(t *testing.T, what string, r *mcpResponse, limit, scope string) {
	t.Helper()
	if r == nil {
		t.Errorf("%s: admitted; want the refusal of limit %s (%s)", what, limit, scope)
		return
	}
	status := map[string]int{"principal": http.StatusTooManyRequests, "node": http.StatusServiceUnavailable}[scope]
	if r.status != status || r.header.Get("Retry-After") == "" || r.msg.Error == nil {
		t.Errorf("%s: HTTP %d, Retry-After %q: %.200s; want %d with Retry-After and a JSON-RPC error", what, r.status, r.header.Get("Retry-After"), r.body, status)
		return
	}
	e := r.rpcError()
	if e.Code != limits.CodeLimitExceeded || e.Data["limit"] != limit || e.Data["scope"] != scope {
		t.Errorf("%s: error %d %q data %v; want %d naming limit %s, scope %s", what, e.Code, e.Message, e.Data, limits.CodeLimitExceeded, limit, scope)
	}
}

// TestListenAttackHeapBounded drives finding 1 from one read-only
// principal: listen streams, each with a 3.7 MiB body of 480 long URIs of
// blobs that do not exist.
//
// At the default limits (4 MiB of subscribed URI bytes a principal) the
// first stream is acknowledged and every other is refused with -32029
// (HTTP 429, data.limit subscription_bytes); the heap the 12 attempts (3
// under -race or -short) leave live, with the admitted stream open, stays
// under 8 MiB (3.9 MiB; the old code kept every stream, 11.6 MiB each:
// +140 MiB).
//
// With the byte budget raised to 64 MiB, as many streams are admitted and
// each keeps at most its URIs' bytes and a quarter more, plus 256 KiB of
// connection state (3.84 MiB for 3.66 MiB of URIs; the old code 11.6 MiB,
// 3.2 times its URIs: the request's rebuilt body, its decoded URIs, the
// acknowledgement's event buffer).
func TestListenAttackHeapBounded(t *testing.T) {
	heapTest(t)
	streams := 12
	if raceEnabled || testing.Short() {
		streams = 3 // a 4 MiB body takes seconds under -race
	}
	uriBytes := int64(listenURIs * listenURIBytes)

	t.Run("default limits", func(t *testing.T) {
		base, keys := serveBudgeted(t, limits.Limits{}, "reader")
		c := budgetClient(t, base, modernVersion, keys["reader"])
		body := listenBody(c, listenURIs, listenURIBytes)
		before := liveHeap()
		admitted := 0
		for i := range streams {
			s, refused := c.openListen(c.listenRequest(body))
			if s != nil {
				admitted++
				continue
			}
			checkLimitRefusal(t, fmt.Sprintf("listen %d", i+1), refused, "subscription_bytes", "principal")
		}
		grew := liveHeap() - before
		t.Logf("%d listen streams of %.1f MiB of URIs: %d admitted, live heap grew %.1f MiB", streams, float64(uriBytes)/(1<<20), admitted, float64(grew)/(1<<20))
		if admitted != 1 {
			t.Errorf("%d streams admitted, want 1 (4 MiB of URI bytes a principal)", admitted)
		}
		if grew > 8<<20 {
			t.Errorf("the live heap grew %.1f MiB with the streams open; want under 8 MiB", float64(grew)/(1<<20))
		}
	})

	t.Run("raised byte budget", func(t *testing.T) {
		base, keys := serveBudgeted(t, limits.Limits{SubscriptionBytesPerPrincipal: 64 << 20}, "reader")
		c := budgetClient(t, base, modernVersion, keys["reader"])
		body := listenBody(c, listenURIs, listenURIBytes)
		before := liveHeap()
		for i := range streams {
			if s, refused := c.openListen(c.listenRequest(body)); s == nil {
				t.Fatalf("listen %d refused under a 64 MiB budget: %d %.300s", i+1, refused.status, refused.body)
			}
		}
		grew := liveHeap() - before
		perStream := grew / int64(streams)
		t.Logf("%d listen streams open: live heap grew %.1f MiB, %.2f MiB a stream for %.2f MiB of URIs", streams, float64(grew)/(1<<20), float64(perStream)/(1<<20), float64(uriBytes)/(1<<20))
		if limit := uriBytes*5/4 + 256<<10; perStream > limit {
			t.Errorf("each open listen stream keeps %.2f MiB; want at most %.2f MiB (its URIs and a quarter, 256 KiB of connection)", float64(perStream)/(1<<20), float64(limit)/(1<<20))
		}
	})
}

// TestStreamBudget: listen and GET streams each take one open stream of
// their principal while open, at most 3 a principal and 5 on the node
// here; one more is refused before any stream starts (-32029 naming
// "streams", HTTP 429 for the principal's bound, 503 for the node's, with
// Retry-After), and a stream that ends gives its unit back.
func TestStreamBudget(t *testing.T) {
	parallel(t)
	base, keys := serveBudgeted(t, limits.Limits{StreamsPerPrincipal: 3, Streams: 5}, "reader", "other")
	modern := budgetClient(t, base, modernVersion, keys["reader"])
	listen := func(c *mcpClient) (*openStream, *mcpResponse) {
		return c.openListen(c.request("subscriptions/listen", `{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["blob:///missing"]}}`))
	}
	var held []*openStream
	for i := range 2 {
		s, refused := listen(modern)
		if s == nil {
			t.Fatalf("listen %d under the budget: %d %.300s", i+1, refused.status, refused.body)
		}
		held = append(held, s)
	}
	legacy := budgetClient(t, base, legacyVersion, keys["reader"])
	get, refused := legacy.openSSE(legacy.get(""))
	if get == nil {
		t.Fatalf("GET stream under the budget: %d %.300s", refused.status, refused.body)
	}
	_, refused = listen(modern)
	checkLimitRefusal(t, "a 4th stream of the principal (listen)", refused, "streams", "principal")
	second := budgetClient(t, base, legacyVersion, keys["reader"])
	_, refused = second.openSSE(second.get(""))
	checkLimitRefusal(t, "a 4th stream of the principal (GET)", refused, "streams", "principal")

	other := budgetClient(t, base, modernVersion, keys["other"])
	for i := range 2 {
		if s, refused := listen(other); s == nil {
			t.Fatalf("another principal's listen %d: %d %.300s", i+1, refused.status, refused.body)
		}
	}
	_, refused = listen(other)
	checkLimitRefusal(t, "a 6th stream on the node", refused, "streams", "node")

	get.close() // the server sees it gone at its next keep-alive
	eventually(t, 10*time.Second, func() bool {
		s, _ := listen(modern)
		return s != nil
	})
	held[0].close()
	eventually(t, 10*time.Second, func() bool {
		s, _ := legacy.openSSE(legacy.get(""))
		return s != nil
	})
}

// TestStreamBudgetConcurrentOpenClose opens and closes listen and GET
// streams of one principal from many goroutines at once (run it with
// -race): every stream is either admitted or refused with -32029, no
// unit is given back twice (the pool would panic) or kept, so once all
// are closed exactly the principal's bound can be opened again.
func TestStreamBudgetConcurrentOpenClose(t *testing.T) {
	parallel(t)
	const bound = 4
	base, keys := serveBudgeted(t, limits.Limits{StreamsPerPrincipal: bound}, "reader")
	modern := budgetClient(t, base, modernVersion, keys["reader"])
	var wg sync.WaitGroup
	var admitted, refusedN atomic.Int64
	for g := range 12 {
		wg.Go(func() {
			c := modern
			if g%3 == 0 {
				c = budgetClient(t, base, legacyVersion, keys["reader"])
			}
			for i := range 8 {
				var s *openStream
				var refused *mcpResponse
				if g%3 == 0 {
					s, refused = c.openSSE(c.get(""))
				} else {
					s, refused = c.openListen(c.request("subscriptions/listen", fmt.Sprintf(`{"notifications":{"resourceSubscriptions":["blob:///g%d/%d"]}}`, g, i)))
				}
				if s == nil {
					refusedN.Add(1)
					if refused.status != http.StatusTooManyRequests && refused.status != http.StatusConflict {
						t.Errorf("goroutine %d: refused with %d %.200s", g, refused.status, refused.body)
					}
					continue
				}
				admitted.Add(1)
				s.close()
			}
		})
	}
	wg.Wait()
	t.Logf("%d streams admitted, %d refused (429, or 409 for a session's GET stream not yet released)", admitted.Load(), refusedN.Load())
	var held []*openStream
	eventually(t, 10*time.Second, func() bool {
		s, _ := modern.openListen(modern.request("subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`))
		if s != nil {
			held = append(held, s)
		}
		return len(held) == bound
	})
	_, refused := modern.openListen(modern.request("subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`))
	checkLimitRefusal(t, "one stream over the bound after the storm", refused, "streams", "principal")
}
