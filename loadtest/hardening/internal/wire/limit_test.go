package wire

import (
	"net/http"
	"testing"
)

func TestJudgeLimit(t *testing.T) {
	h := func(kv ...string) http.Header {
		x := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(kv); i += 2 {
			x.Set(kv[i], kv[i+1])
		}
		return x
	}
	refusal := func(limit, scope string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32029,"message":"Too Many Requests: sessions","data":{"limit":"` + limit + `","scope":"` + scope + `","max":1024}}}`)
	}
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	for _, c := range []struct {
		name string
		a    Answer
		want Verdict
	}{
		{"principal refusal", Answer{Status: 429, Header: h("Retry-After", "5"), Body: refusal("sessions", "principal")}, Clear},
		{"node refusal", Answer{Status: 503, Header: h("Retry-After", "5"), Body: refusal("streams", "node")}, Clear},
		{"refusal inside an SSE stream", Answer{Status: 200, Header: sse, Body: append(append([]byte("event: message\ndata: "), refusal("pending", "principal")...), "\n\n"...)}, Clear},
		{"principal refusal with 503", Answer{Status: 503, Header: h("Retry-After", "5"), Body: refusal("sessions", "principal")}, Unclear},
		{"refusal without Retry-After", Answer{Status: 429, Header: h(), Body: refusal("sessions", "principal")}, Unclear},
		{"refusal with a date Retry-After", Answer{Status: 429, Header: h("Retry-After", "Fri, 27 Nov 2026 07:00:00 GMT"), Body: refusal("sessions", "principal")}, Unclear},
		{"refusal naming no limit", Answer{Status: 429, Header: h("Retry-After", "5"), Body: refusal("", "principal")}, Unclear},
		{"refusal naming an unknown limit", Answer{Status: 429, Header: h("Retry-After", "5"), Body: refusal("sockets", "principal")}, Unclear},
		{"refusal with HTTP 200 JSON", Answer{Status: 200, Header: h("Retry-After", "5"), Body: refusal("sessions", "principal")}, Unclear},
		{"another JSON-RPC error", Answer{Status: 200, Header: h(), Body: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"too many"}}`)}, Unclear},
		{"internal error", Answer{Status: 200, Header: h(), Body: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`)}, ServerError},
		{"plain 503", Answer{Status: 503, Header: h("Retry-After", "5"), Body: []byte(`{"error":{"code":"unavailable","message":"busy"}}`)}, ServerError},
		{"result", Answer{Status: 200, Header: h(), Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, Accepted},
		{"202", Answer{Status: 202, Header: http.Header{}}, Accepted},
		{"429 without a body", Answer{Status: 429, Header: h("Retry-After", "5")}, Unclear},
		{"no answer", Answer{}, Unclear},
	} {
		if got, why := JudgeLimit(&c.a); got != c.want {
			t.Errorf("%s: got %d (%s), want %d", c.name, got, why, c.want)
		}
	}
}

func TestJudgeClaims(t *testing.T) {
	h := func(retry string) http.Header {
		x := http.Header{"Content-Type": {"application/json"}}
		if retry != "" {
			x.Set("Retry-After", retry)
		}
		return x
	}
	body := []byte(`{"error":{"code":"too_many_claims","message":"Too many claims; try again later"}}`)
	for _, c := range []struct {
		name string
		a    Answer
		want Verdict
	}{
		{"refusal", Answer{Status: 429, Header: h("12"), Body: body}, Clear},
		{"refusal without Retry-After", Answer{Status: 429, Header: h(""), Body: body}, Unclear},
		{"another code", Answer{Status: 429, Header: h("12"), Body: []byte(`{"error":{"code":"too_many_requests","message":"slow down"}}`)}, Unclear},
		{"403", Answer{Status: 403, Header: h(""), Body: []byte(`{"error":{"code":"forbidden","message":"no"}}`)}, Unclear},
		{"503", Answer{Status: 503, Header: h("12"), Body: body}, ServerError},
		{"206", Answer{Status: 206, Header: h(""), Body: []byte("a")}, Accepted},
	} {
		if got, why := JudgeClaims(&c.a); got != c.want {
			t.Errorf("%s: got %d (%s), want %d", c.name, got, why, c.want)
		}
	}
}
