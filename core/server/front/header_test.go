package front

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestHeaderAdapterCommonValues: a value answered from the constants is
// the value the request carries, and any other value is copied as sent.
func TestHeaderAdapterCommonValues(t *testing.T) {
	for _, v := range []string{"application/json", "application/json, text/event-stream", "text/event-stream, application/json",
		"2025-11-25", "2025-06-18", "2025-03-26", "2026-07-28", "resources/read", "tools/list", "tools/call",
		"", "application/json; charset=utf-8", "2025-11-2", "Tools/list", "tools/list "} {
		var h fasthttp.RequestHeader
		h.Set("X-Test", v)
		if got := (headerAdapter{&h}).Get("X-Test"); got != v {
			t.Errorf("Get of %q = %q", v, got)
		}
	}
	var h fasthttp.RequestHeader
	if got := (headerAdapter{&h}).Get("X-Absent"); got != "" {
		t.Errorf("Get of an absent header = %q", got)
	}
}

// TestSetBodyPartsIsTheirConcatenation: the body sent is the three parts
// in order, whatever body was set before, and later changes to the parts
// (the encoded-once results they come from) do not reach it.
func TestSetBodyPartsIsTheirConcatenation(t *testing.T) {
	var ctx fasthttp.RequestCtx
	w := &responseAdapter{ctx: &ctx}
	w.SetBody([]byte("stale"))
	head, mid := []byte(`{"jsonrpc":"2.0","id":7,"result":`), []byte(`{"tools":[]}`)
	w.SetBodyParts(head, mid, []byte{'}'})
	mid[2] = 'X'
	if got, want := string(ctx.Response.Body()), `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`; got != want {
		t.Fatalf("body %q, want %q", got, want)
	}
}
