package h1

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The response head is read as net/http reads it: the status, headers
// under their canonical names (several values kept in order), the body
// framed by its chunks or length, 1xx skipped; a head it does not read
// plainly is an error, and a body cut short is io.ErrUnexpectedEOF.
func TestReadHead(t *testing.T) {
	for _, c := range []struct {
		name, answer, body, err string
		status                  int
		header                  http.Header
		length                  int64
		close                   bool
	}{
		{name: "chunked, a trailer",
			answer: "HTTP/1.1 201 Created\r\ncontent-type: text/event-stream\r\nX-A: 1\r\nx-a: 2\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"3\r\nabc\r\n2;e=1\r\nde\r\n0\r\nT: x\r\n\r\n",
			status: 201, body: "abcde", length: -1,
			header: http.Header{"Content-Type": {"text/event-stream"}, "X-A": {"1", "2"}}},
		{name: "length", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
			status: 200, body: "hello", length: 5, header: http.Header{"Content-Length": {"5", "5"}}},
		{name: "1xx first", answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nMcp-Session-Id:  s1 \r\n\r\n",
			status: 204, length: 0, header: http.Header{"Mcp-Session-Id": {"s1"}}},
		{name: "HTTP/1.0", answer: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
			status: 200, body: "ok", length: 2, close: true, header: http.Header{"Content-Length": {"2"}}},
		{name: "connection close", answer: "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok",
			status: 200, body: "ok", length: 2, close: true,
			header: http.Header{"Connection": {"keep-alive, close"}, "Content-Length": {"2"}}},
		{name: "lengths differ", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", err: "differ"},
		{name: "folded", answer: "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\n\r\n", err: "malformed"},
		{name: "bare CR in a value", answer: "HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\n\r\n", err: "malformed"},
		{name: "no colon", answer: "HTTP/1.1 200 OK\r\nX-A\r\n\r\n", err: "malformed"},
		{name: "not HTTP", answer: "SSH-2.0-x\r\n\r\n", err: "malformed"},
		{name: "a banner, then the end", answer: "SSH-2.0-OpenSSH_9.6\r\n", err: "malformed"},
		{name: "gzip coding", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", err: "not chunked"},
		{name: "cut short", answer: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello", status: 200, length: 9,
			header: http.Header{"Content-Length": {"9"}}, body: "hello", err: io.ErrUnexpectedEOF.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := New(Options{})
			defer tr.CloseIdle()
			url := scriptedOnce(t, c.answer)
			resp, err := get(t, tr, t.Context(), url, nil, 0)
			if err != nil {
				if c.err == "" || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want one saying %q", err, c.err)
				}
				if c.err != io.ErrUnexpectedEOF.Error() && !errors.Is(err, ErrMalformed) {
					t.Errorf("error %v does not wrap ErrMalformed (the gateway names it so)", err)
				}
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != c.status || resp.ContentLength != c.length || resp.Close != c.close {
				t.Errorf("status %d length %d close %v; want %d %d %v", resp.StatusCode, resp.ContentLength, resp.Close,
					c.status, c.length, c.close)
			}
			if len(resp.Header) != len(c.header) {
				t.Errorf("headers %v; want %v", resp.Header, c.header)
			}
			for k, vs := range c.header {
				if strings.Join(resp.Header[k], "|") != strings.Join(vs, "|") {
					t.Errorf("header %s = %q; want %q", k, resp.Header[k], vs)
				}
			}
			b, err := io.ReadAll(resp.Body)
			if string(b) != c.body || (c.err == "") != (err == nil) || (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) {
				t.Errorf("body %q, %v; want %q (error %q)", b, err, c.body, c.err)
			}
		})
	}
}

// scriptedOnce answers one request with answer, then closes the
// connection.
func scriptedOnce(t *testing.T, answer string) string {
	t.Helper()
	return scripted(t, []string{answer}, nil)
}
