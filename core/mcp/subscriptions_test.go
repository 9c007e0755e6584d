package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/limits"
)

// longURI is a URI of size bytes of a blob that does not exist.
func longURI(session, i, size int) string {
	head := fmt.Sprintf("blob:///missing/%03d/%04d/", session, i)
	return head + strings.Repeat("u", size-len(head))
}

// subscribeTo sends resources/subscribe (on) or unsubscribe of uri.
func (c *testClient) subscribeTo(uri string, on bool) *response {
	c.t.Helper()
	m := "resources/subscribe"
	if !on {
		m = "resources/unsubscribe"
	}
	return c.request(m, "", `{"uri":`+string(jsonString(uri))+`}`)
}

// checkLimitError checks r is the refusal of limit for the principal:
// -32029 with data {limit, scope}, HTTP 429 and Retry-After.
func checkLimitError(t *testing.T, what string, r *response, limit string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("%s: accepted; want -32029 naming %s", what, limit)
	}
	var data struct{ Limit, Scope string }
	_ = json.Unmarshal(r.Error.Data, &data)
	if r.Error.Code != limits.CodeLimitExceeded || data.Limit != limit || data.Scope != "principal" ||
		r.rec.statusCode() != http.StatusTooManyRequests || r.rec.header.Get("Retry-After") == "" {
		t.Fatalf("%s: HTTP %d, Retry-After %q, error %+v %s; want 429 with Retry-After, -32029 naming %s for the principal",
			what, r.rec.statusCode(), r.rec.header.Get("Retry-After"), r.Error, r.Error.Data, limit)
	}
}

// TestLegacySubscriptionsBudget drives a subscription flood: one principal
// opens 12 sessions and subscribes each to 600 URIs of 8,000 bytes of blobs
// that do not exist (old code: every one kept, 1,024 a session, any number of
// sessions, after the connection is gone: +58 MiB here). At the default
// budget of 4 MiB of URI bytes a principal, 524 are kept in all, the rest
// refused with -32029 (subscription_bytes, HTTP 429), the heap grows by less
// than 8 MiB, another principal is not affected, and deleting the sessions
// gives the budget back.
func TestLegacySubscriptionsBudget(t *testing.T) {
	const sessions, perSession, size = 12, 600, 8000
	s := NewServer(testImpl, &Options{})
	before := heapInUse()
	var clients []*testClient
	kept := 0
	for i := range sessions {
		c := newLegacyClientAs(t, s, "reader")
		clients = append(clients, c)
		for j := range perSession {
			r := c.subscribeTo(longURI(i, j, size), true)
			if r.Error != nil {
				checkLimitError(t, fmt.Sprintf("session %d, subscription %d", i, j), r, "subscription_bytes")
				break
			}
			kept++
		}
	}
	grew := int64(heapInUse()) - int64(before)
	t.Logf("%d sessions × %d subscriptions of %d bytes: %d kept, heap grew %.1f MiB", sessions, perSession, size, kept, float64(grew)/(1<<20))
	if want := limits.DefaultSubscriptionBytesPerPrincipal / size; kept != want {
		t.Errorf("%d subscriptions kept; want %d (4 MiB of URI bytes)", kept, want)
	}
	if grew > 8<<20 {
		t.Errorf("the heap grew %.1f MiB; want under 8 MiB", float64(grew)/(1<<20))
	}
	if r := newLegacyClientAs(t, s, "other").subscribeTo(longURI(99, 0, size), true); r.Error != nil {
		t.Fatalf("another principal refused: %+v", r.Error)
	}
	for _, c := range clients {
		rec := newRecorder()
		s.ServeMCP(&Request{Method: http.MethodDelete, Header: c.headers("", ""), Principal: "reader"}, rec)
		if rec.statusCode() != http.StatusOK {
			t.Fatalf("DELETE: %d %s", rec.statusCode(), rec.body.String())
		}
	}
	fresh := newLegacyClientAs(t, s, "reader")
	for j := range kept {
		if r := fresh.subscribeTo(longURI(100, j, size), true); r.Error != nil {
			t.Fatalf("subscription %d after the sessions were deleted: %+v", j, r.Error)
		}
	}
	checkLimitError(t, "one more after the budget was used again", fresh.subscribeTo(longURI(100, kept, size), true), "subscription_bytes")
}

// TestSubscriptionCountBudget: the number of subscriptions is bounded per
// principal across its sessions and listen streams, an unsubscribe gives
// one back, and a repeated subscription costs nothing.
func TestSubscriptionCountBudget(t *testing.T) {
	s := NewServer(testImpl, &Options{Limits: limits.Limits{SubscriptionsPerPrincipal: 10}})
	a, b := newLegacyClientAs(t, s, "reader"), newLegacyClientAs(t, s, "reader")
	for i := range 10 {
		c := []*testClient{a, b}[i%2]
		if r := c.subscribeTo(longURI(i%2, i, 64), true); r.Error != nil {
			t.Fatalf("subscription %d: %+v", i, r.Error)
		}
	}
	if r := a.subscribeTo(longURI(0, 0, 64), true); r.Error != nil {
		t.Fatalf("subscribing again to a subscribed URI: %+v", r.Error)
	}
	checkLimitError(t, "an 11th subscription", b.subscribeTo(longURI(1, 99, 64), true), "subscriptions")
	m := newModernClient(t, s).as("reader")
	h := m.headers("subscriptions/listen", "")
	h["Accept"] = "application/json" // were it admitted, no stream to wait on
	listen := m.post(h, strings.NewReader(m.message("subscriptions/listen", `{"notifications":{"resourceSubscriptions":["blob:///x"]}}`)))
	checkLimitError(t, "a listen stream over the count", listen, "subscriptions")
	if r := a.subscribeTo(longURI(0, 0, 64), false); r.Error != nil {
		t.Fatalf("unsubscribe: %+v", r.Error)
	}
	if r := b.subscribeTo(longURI(1, 99, 64), true); r.Error != nil {
		t.Fatalf("a subscription after an unsubscribe: %+v", r.Error)
	}
}

// TestListenWithoutStreamGivesBack: a subscriptions/listen whose client
// takes no SSE is answered with an error after its precheck took a
// stream and its subscriptions; it gives them back, so the next one is
// not refused by the budget.
func TestListenWithoutStreamGivesBack(t *testing.T) {
	s := NewServer(testImpl, &Options{Limits: limits.Limits{StreamsPerPrincipal: 1, SubscriptionsPerPrincipal: 1}})
	m := newModernClient(t, s).as("reader")
	for i := range 3 {
		h := m.headers("subscriptions/listen", "")
		h["Accept"] = "application/json"
		r := m.post(h, strings.NewReader(m.message("subscriptions/listen", `{"notifications":{"resourceSubscriptions":["blob:///x"]}}`)))
		if r.Error == nil || r.Error.Code != CodeInvalidRequest || !strings.Contains(r.Error.Message, "SSE") {
			t.Fatalf("listen %d without SSE: %+v; want -32600 asking for SSE", i+1, r.Error)
		}
	}
	if held := s.budgets.Streams.Total() + s.budgets.Subscriptions.Total() + s.budgets.SubscriptionBytes.Total(); held != 0 {
		t.Fatalf("%d units still held after the listens ended", held)
	}
}
