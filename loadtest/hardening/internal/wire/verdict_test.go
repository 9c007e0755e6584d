package wire

import (
	"net/http"
	"testing"
)

func TestJudge(t *testing.T) {
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	textHdr := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	htmlHdr := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	r := NewRules("/srv/work-folder")
	for _, c := range []struct {
		name       string
		sh         Shape
		wellFormed bool
		a          Answer
		want       Verdict
	}{
		{"api error", ShapeAPI, false, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"error":{"code":"bad_request","message":"bad key"}}`)}, Clear},
		{"api error, plain text", ShapeAPI, false, Answer{Status: 400, Header: textHdr, Body: []byte("Error when parsing request")}, Unclear},
		{"api error, JSON-RPC body", ShapeAPI, false, Answer{Status: 431, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"too large"}}`)}, Unclear},
		{"api error, empty message", ShapeAPI, false, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"error":{"code":"x","message":""}}`)}, Unclear},
		{"api error, host path", ShapeAPI, false, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"error":{"code":"x","message":"stat /tmp/d/k: no"}}`)}, Unclear},
		{"api error, work folder", ShapeAPI, false, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"error":{"code":"x","message":"at /srv/work-folder/x"}}`)}, Unclear},
		{"api error, echoed key with tmp", ShapeAPI, false, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"error":{"code":"x","message":"invalid key \".mcpblob/tmp/x\""}}`)}, Clear},
		{"api success", ShapeAPI, false, Answer{Status: 201, Header: jsonHdr, Body: []byte(`{"key":"a"}`)}, Accepted},
		{"5xx", ShapeAPI, false, Answer{Status: 500, Header: jsonHdr, Body: []byte(`{"error":{"code":"internal","message":"internal error"}}`)}, ServerError},
		{"no answer", ShapeAPI, false, Answer{}, Unclear},
		{"HEAD 404 without a body", ShapeAPI, false, Answer{Status: 404, Head: true}, Clear},
		{"GET 404 without a body", ShapeAPI, false, Answer{Status: 404}, Unclear},
		{"HEAD 500 without a body", ShapeAPI, false, Answer{Status: 500, Head: true}, ServerError},
		{"100 then nothing", ShapeAPI, false, Answer{Interim: []int{100}}, Accepted},
		{"rpc error", ShapeRPC, true, Answer{Status: 200, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`)}, Clear},
		{"rpc internal", ShapeRPC, true, Answer{Status: 200, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`)}, ServerError},
		{"parse error for JSON", ShapeRPC, true, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`)}, Unclear},
		{"parse error for garbage", ShapeRPC, false, Answer{Status: 400, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`)}, Clear},
		{"isError", ShapeRPC, true, Answer{Status: 200, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Argument \"key\": too long"}]}}`)}, Clear},
		{"isError with errno", ShapeRPC, true, Answer{Status: 200, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"stat k: file name too long"}]}}`)}, Unclear},
		{"isError over SSE", ShapeRPC, true, Answer{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: []byte("id: 1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"no\"}]}}\n\n")}, Clear},
		{"rpc result", ShapeRPC, true, Answer{Status: 200, Header: jsonHdr, Body: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, Accepted},
		{"rpc 202", ShapeRPC, true, Answer{Status: 202, Header: http.Header{}}, Accepted},
		{"rpc plain-text 400", ShapeRPC, true, Answer{Status: 400, Header: textHdr, Body: []byte("Error when parsing request")}, Unclear},
		{"rpc 431 before parsing", ShapeRPC, false, Answer{Status: 431, Header: jsonHdr, Body: []byte(`{"error":{"code":"header_too_large","message":"headers over 16384 bytes"}}`)}, Clear},
		{"rpc 200 with an HTTP error body", ShapeRPC, false, Answer{Status: 200, Header: jsonHdr, Body: []byte(`{"error":{"code":"x","message":"y"}}`)}, Unclear},
		{"rpc 405 without body", ShapeRPC, false, Answer{Status: 405, Header: http.Header{"Allow": {"POST"}}}, Clear},
		{"page 403", ShapePage, false, Answer{Status: 403, Header: htmlHdr, Body: []byte("<html><p>This upload link is not valid.</p></html>")}, Clear},
		{"page 404 text", ShapePage, false, Answer{Status: 404, Header: textHdr, Body: []byte("not found")}, Unclear},
	} {
		if got, why := r.Judge(c.sh, c.wellFormed, &c.a); got != c.want {
			t.Errorf("%s: got %d (%s), want %d", c.name, got, why, c.want)
		}
	}
}
