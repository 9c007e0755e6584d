package h1

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// goSDKAnswer is the head and body of a go-sdk server's answer to a POST:
// one event, chunked.
const goSDKAnswer = "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\n" +
	"Content-Type: text/event-stream\r\nMcp-Session-Id: 6RZ3XK4QDQ7JZ3J5JQ2ZC2ZQ2M\r\n" +
	"Date: Fri, 27 Nov 2026 18:00:00 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" +
	"4b\r\nevent: message\nid: 1_0\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n\r\n0\r\n\r\n"

// The head and body of an answer, read with net/http's ReadResponse and
// with readHead and frame (go test -bench ReadHead -benchmem).
func BenchmarkReadHead(b *testing.B) {
	req, _ := http.NewRequest(http.MethodPost, "http://up/mcp", nil)
	src := strings.NewReader(goSDKAnswer)
	br := bufio.NewReaderSize(src, bufSize)
	b.Run("net-http", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			src.Reset(goSDKAnswer)
			br.Reset(src)
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
		}
	})
	b.Run("h1", func(b *testing.B) {
		b.ReportAllocs()
		var scratch []byte
		for b.Loop() {
			src.Reset(goSDKAnswer)
			br.Reset(src)
			resp, head, err := readHead(br, req, scratch)
			scratch = head[:0]
			if err == nil {
				err = frame(resp, br)
			}
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
		}
	})
}
