//go:build unix

package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// postWhole sends body as a request held in memory (GetBody set): it goes
// out whole from the connection's buffer.
func postWhole(tr *Transport, ctx context.Context, url string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A request sent whole from memory on a plain socket has the wait for its
// answer joined to its write (no empty read between them): answers arrive
// whole, late or not, on one kept-alive connection.
func TestJoinedWait(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/late" {
			time.Sleep(30 * time.Millisecond)
		}
		_, _ = w.Write(b)
	}))
	defer up.Close()
	var dials atomic.Int64
	var last *conn
	tr := counting(Options{HeaderTimeout: 5 * time.Second}, &dials)
	for i, path := range []string{"/", "/late", "/", "/late"} {
		got, err := postWhole(tr, t.Context(), up.URL+path, []byte("ping"))
		if err != nil || got != "ping" {
			t.Fatalf("request %d (%s): %q %v", i, path, got, err)
		}
	}
	tr.mu.Lock()
	for _, cs := range tr.idle {
		last = cs[len(cs)-1]
	}
	tr.mu.Unlock()
	if dials.Load() != 1 || last == nil {
		t.Fatalf("%d connections, want one kept alive", dials.Load())
	}
	if last.peek.joined != 4 {
		t.Errorf("%d of 4 requests had the wait joined to their write", last.peek.joined)
	}
}

// The joined wait keeps the request's bounds: an answer later than
// HeaderTimeout is a timeout, and a POST that went out whole on a reused
// connection is not sent again.
func TestJoinedWaitTimeout(t *testing.T) {
	var calls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if calls.Add(1) == 2 {
			time.Sleep(300 * time.Millisecond)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer up.Close()
	tr := New(Options{HeaderTimeout: 50 * time.Millisecond})
	if got, err := postWhole(tr, t.Context(), up.URL, []byte("x")); err != nil || got != "ok" {
		t.Fatalf("first request: %q %v", got, err)
	}
	var ne net.Error
	if _, err := postWhole(tr, t.Context(), up.URL, []byte("x")); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("slow answer: %v, want a timeout", err)
	}
	time.Sleep(350 * time.Millisecond)
	if n := calls.Load(); n != 2 {
		t.Errorf("the upstream got %d requests, want 2 (the timed-out POST not sent again)", n)
	}
}

// A request the socket takes only in part (a slow reader, small buffers)
// has the rest written as any write and its answer read as any: whole.
func TestJoinedWaitPartialWrite(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
	}}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serveOne(ln, func(nc net.Conn) {
		time.Sleep(50 * time.Millisecond) // the client's write fills the buffers
		req, err := http.ReadRequest(bufio.NewReader(nc))
		if err != nil {
			return
		}
		h := sha256.New()
		_, _ = io.Copy(h, req.Body)
		sum := hex.EncodeToString(h.Sum(nil))
		_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n"+sum)
	})
	tr := New(Options{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = nc.(*net.TCPConn).SetWriteBuffer(4 << 10)
		}
		return nc, err
	}})
	body := []byte(strings.Repeat("0123456789abcdef", 3<<10)) // 48 KiB: one write from the 64 KiB buffer
	want := sha256.Sum256(body)
	got, err := postWhole(tr, t.Context(), "http://"+ln.Addr().String()+"/", body)
	if err != nil || got != hex.EncodeToString(want[:]) {
		t.Fatalf("answer %q %v, want the body's sha256", got, err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, cs := range tr.idle {
		if j := cs[0].peek.joined; j != 0 {
			t.Errorf("the socket took the request whole (%d joined waits): the test did not reach a partial write", j)
		}
	}
}

// A plain socket's answers are read with the raw read (peeker.read): a
// large one whole, and one that ends with the connection (no length) to
// its end.
func TestRawRead(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB, many reads
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, big)
	}))
	defer up.Close()
	var dials atomic.Int64
	tr := counting(Options{}, &dials)
	got, err := postWhole(tr, t.Context(), up.URL, []byte("x"))
	if err != nil || got != big {
		t.Fatalf("%d bytes, %v; want %d", len(got), err, len(big))
	}
	reads := 0
	tr.mu.Lock()
	for _, cs := range tr.idle {
		reads += cs[0].peek.raws
	}
	tr.mu.Unlock()
	if reads < 2 {
		t.Errorf("%d raw reads on the kept-alive connection, want its answer read through them", reads)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serveOne(ln, func(nc net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(nc)); err == nil {
			_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"+big)
		}
	})
	if got, err := postWhole(tr, t.Context(), "http://"+ln.Addr().String()+"/", []byte("x")); err != nil || got != big {
		t.Fatalf("an answer that ends with the connection: %d bytes, %v; want %d", len(got), err, len(big))
	}
}

// serveOne accepts one connection on ln, on a goroutine, hands it to
// serve and closes it after.
func serveOne(ln net.Listener, serve func(nc net.Conn)) {
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(nc)
	}()
}
