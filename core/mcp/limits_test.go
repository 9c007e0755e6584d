package mcp

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/session"
)

// TestSubscriptionLimits: a session holds at most session.MaxSubscriptions
// resource subscriptions and no URI is longer than MaxURIBytes (bd4921f
// kept 8,000 subscriptions of 60 KB URIs on one session: 850 MB).
func TestSubscriptionLimits(t *testing.T) {
	s := NewServer(testImpl, &Options{})
	c := newLegacyClient(t, s)
	sub := func(uri string) *response {
		return c.request("resources/subscribe", "", `{"uri":`+string(jsonString(uri))+`}`)
	}
	for i := range session.MaxSubscriptions {
		if r := sub("blob:///k" + strconv.Itoa(i)); r.Error != nil {
			t.Fatalf("subscription %d: %+v", i, r.Error)
		}
	}
	if r := sub("blob:///one-more"); r.Error == nil || r.Error.Code != CodeInvalidParams {
		t.Fatalf("subscription beyond the limit: %+v; want -32602", r.Error)
	}
	if r := sub("blob:///k7"); r.Error != nil {
		t.Fatalf("subscribing again to a subscribed URI: %+v", r.Error)
	}
	if r := c.request("resources/unsubscribe", "", `{"uri":"blob:///k7"}`); r.Error != nil {
		t.Fatalf("unsubscribe: %+v", r.Error)
	}
	if r := sub("blob:///one-more"); r.Error != nil {
		t.Fatalf("subscription after an unsubscribe: %+v", r.Error)
	}
	long := "blob:///" + strings.Repeat("x", MaxURIBytes)
	if r := sub(long); r.Error == nil || r.Error.Code != CodeInvalidParams || !strings.Contains(r.Error.Message, "longer than") {
		t.Fatalf("over-long URI: %+v; want -32602 naming the length", r.Error)
	}
	m := newModernClient(t, s)
	many := make([]string, session.MaxSubscriptions+1)
	for i := range many {
		many[i] = strconv.Quote("blob:///k" + strconv.Itoa(i))
	}
	r := m.request("subscriptions/listen", "", `{"notifications":{"resourceSubscriptions":[`+strings.Join(many, ",")+`]}}`)
	if r.Error == nil || r.Error.Code != CodeInvalidParams {
		t.Fatalf("subscriptions/listen with too many URIs: %+v; want -32602", r.Error)
	}
}

// TestEndedSessionsCompact: ending many sessions keeps a compact record
// (bd4921f kept every full id for 24 h: +150 MB for 40,000), and an ended
// session stays ended.
func TestEndedSessionsCompact(t *testing.T) {
	n := 40_000
	if testing.Short() {
		n = 4_000
	}
	s := NewServer(testImpl, &Options{})
	before := heapInUse()
	var last *testClient
	for range n {
		last = newLegacyClient(t, s)
		rec := newRecorder()
		s.ServeMCP(&Request{Method: http.MethodDelete, Header: last.headers("", "")}, rec)
		if rec.statusCode() != http.StatusOK && rec.statusCode() != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", rec.statusCode(), rec.body.String())
		}
	}
	grew := int64(heapInUse()) - int64(before)
	if limit := int64(n) * 128; grew > limit {
		t.Errorf("%d ended sessions grew the heap by %d KiB; want at most %d KiB (128 B each)", n, grew>>10, limit>>10)
	}
	if r := last.request("tools/list", "", `{}`); r.rec.statusCode() != http.StatusNotFound {
		t.Errorf("request on an ended session: %d; want 404", r.rec.statusCode())
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestDeepNesting: well-formed JSON nested deeper than the scanner follows
// is an Invalid Request (bd4921f called it a parse error).
func TestDeepNesting(t *testing.T) {
	s := NewServer(testImpl, &Options{})
	for _, c := range []*testClient{newLegacyClient(t, s), newModernClient(t, s)} {
		deep := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
		r := c.request("tools/call", "x", `{"name":"x","arguments":{"a":`+deep+`}}`)
		if r.Error == nil || r.Error.Code != CodeInvalidRequest || !strings.Contains(r.Error.Message, "deeper than 64") {
			t.Errorf("modern=%v: %+v; want -32600 naming the depth", c.modern, r.Error)
		}
	}
}
