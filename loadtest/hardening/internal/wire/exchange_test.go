package wire

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestSendWatch: after the first answer, a server that closes, one that
// keeps the connection open, and one that answers the bytes that followed
// the request are told apart.
func TestSendWatch(t *testing.T) {
	const ok = "HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nno"
	for _, c := range []struct {
		name  string
		serve func(c net.Conn)
		want  After
	}{
		{"closes", func(c net.Conn) { c.Write([]byte(ok)); c.Close() }, AfterClosed},
		{"keeps open", func(c net.Conn) { c.Write([]byte(ok)); time.Sleep(time.Second); c.Close() }, AfterOpen},
		{"answers again", func(c net.Conn) {
			c.Write([]byte(ok + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			time.Sleep(time.Second)
			c.Close()
		}, AfterAnswered},
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			http.ReadRequest(bufio.NewReader(conn))
			c.serve(conn)
		}()
		a := SendWatch(context.Background(), ln.Addr().String(), []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), http.MethodGet, 5*time.Second, 300*time.Millisecond)
		ln.Close()
		if a.Status != 400 || a.After != c.want {
			t.Errorf("%s: HTTP %d, after: %s; want 400, %s", c.name, a.Status, a.After, c.want)
		}
		if c.want == AfterAnswered && (a.Second == nil || a.Second.Status != 200) {
			t.Errorf("%s: second answer %v", c.name, a.Second)
		}
	}
}
