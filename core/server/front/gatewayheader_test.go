package front

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// gatewayHeader gives the gateway the headers http.Header's Add would:
// canonical names, repeated ones in order, each value whole; a value
// appended to later does not touch its neighbours.
func TestGatewayHeader(t *testing.T) {
	var rh fasthttp.RequestHeader
	rh.DisableNormalizing()
	raw := "POST /mcp HTTP/1.1\r\nHost: h\r\nmcp-session-id: s1\r\nX-Multi: a\r\nAccept: application/json\r\nx-multi: b\r\n" +
		"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n"
	if err := rh.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	want := http.Header{}
	for k, v := range rh.All() {
		want.Add(string(k), string(v))
	}
	got := gatewayHeader(&rh)
	if len(got) != len(want) {
		t.Fatalf("headers %v; want %v", got, want)
	}
	for k, vs := range want {
		if strings.Join(got[k], "|") != strings.Join(vs, "|") {
			t.Errorf("%s = %q; want %q", k, got[k], vs)
		}
	}
	if strings.Join(got["X-Multi"], "|") != "a|b" || got.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("repeated or lower-case names: %v", got)
	}
	got["Accept"] = append(got["Accept"], "text/event-stream")
	if got.Get("Host") != want.Get("Host") || strings.Join(got["X-Multi"], "|") != "a|b" {
		t.Errorf("an append to one value changed another: %v", got)
	}
}
