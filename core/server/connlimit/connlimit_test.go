package connlimit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// Over the total bound a connection gets a JSON 503 and is closed; the one
// admitted keeps what the server's fast paths look for (ReadFrom for
// sendfile, SetWriteBuffer for socket sizing, SyscallConn for the cork), and its place comes back
// when it closes.
func TestTotalBoundAndPassThrough(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := New(inner, 0, 1)
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	first, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	served := <-accepted
	if _, ok := served.(io.ReaderFrom); !ok {
		t.Error("an admitted connection lost ReadFrom (sendfile)")
	}
	if s, ok := served.(interface{ SetWriteBuffer(int) error }); !ok || s.SetWriteBuffer(1<<20) != nil {
		t.Error("an admitted connection lost SetWriteBuffer")
	}
	if s, ok := served.(syscall.Conn); !ok {
		t.Error("an admitted connection lost SyscallConn (the sendfile path corks the socket)")
	} else if _, err := s.SyscallConn(); err != nil {
		t.Errorf("SyscallConn: %v", err)
	}
	expectRefusal(t, inner.Addr().String(), http.StatusServiceUnavailable, "busy")
	served.Close()
	second, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the place of a closed connection did not come back")
	}
}

// expectRefusal dials addr and checks the refusal's status, Retry-After
// and JSON error code.
func expectRefusal(t *testing.T, addr string, status int, code string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != status || err != nil || body.Error.Code != code || resp.Header.Get("Retry-After") == "" {
		t.Errorf("refusal: %d %q (%v), Retry-After %q; want %d %q", resp.StatusCode, body.Error.Code, err, resp.Header.Get("Retry-After"), status, code)
	}
}

// servedPair returns both ends of a connection admitted by a Listener
// without bounds: the client's and the served one; the client's end and
// the Listener close when the test ends.
func servedPair(t *testing.T) (client, served net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := New(inner, 0, 0)
	t.Cleanup(func() { ln.Close() })
	if client, err = net.Dial("tcp", inner.Addr().String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if served, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	return client, served
}

// A connection another goroutine is reading (an idle keep-alive one
// closed at shutdown) is closed at once, which wakes the reader with
// net.ErrClosed; a lingering close would leave it waiting on the linger's
// read deadline.
func TestCloseWakesReader(t *testing.T) {
	_, served := servedPair(t)
	woken := make(chan error, 1)
	go func() {
		_, err := served.Read(make([]byte, 1))
		woken <- err
	}()
	for served.(*conn).state.Load() == 0 { // the Read has not started
		time.Sleep(time.Millisecond)
	}
	served.Close()
	select {
	case err := <-woken:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("the reader woke with %v; want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader was not woken")
	}
}

// After Close, a late Read or deadline from the server's side (fasthttp's
// loop of a connection closed idle at shutdown) leaves the lingering
// socket alone: it gets net.ErrClosed, and the client's bytes stay the
// linger's to drop.
func TestLateReadAfterClose(t *testing.T) {
	client, served := servedPair(t)
	served.Close() // no Read under way: the close lingers
	io.WriteString(client, "GET / HTTP/1.1\r\n\r\n")
	if n, err := served.Read(make([]byte, 64)); n != 0 || !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %d, %v; want 0, net.ErrClosed", n, err)
	}
	if err := served.SetReadDeadline(time.Now().Add(time.Hour)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetReadDeadline after Close: %v; want net.ErrClosed", err)
	}
	if err := served.SetDeadline(time.Now().Add(time.Hour)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetDeadline after Close: %v; want net.ErrClosed", err)
	}
	if err := served.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A connection closed with a request body still arriving lingers: the
// client, still writing, gets the answer written before the close.
func TestCloseLingers(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := New(inner, 0, 0)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		}
		c.Close()
	}()
	resp, err := http.Post("http://"+inner.Addr().String()+"/", "application/octet-stream", bytes.NewReader(make([]byte, 16<<20)))
	if err != nil {
		t.Fatalf("%v; want the 413", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d; want 413", resp.StatusCode)
	}
}
