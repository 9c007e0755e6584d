package linger

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// answerEarly serves one connection of ln: it reads the request's head,
// answers before reading the body, and closes with close.
func answerEarly(t *testing.T, ln net.Listener, close func(net.Conn)) {
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			t.Errorf("request: %v", err)
		}
		io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 7\r\nConnection: close\r\n\r\nrefused")
		close(c)
	}()
}

// waitEnded waits until no close lingers.
func waitEnded(t *testing.T, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * MaxTime); lingering.Load() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d closes still linger", what, lingering.Load())
		}
	}
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// TestRefusalReachesWritingClient: a client still writing a 16 MiB body
// when the server answers and closes gets the answer, not "connection
// reset" (with a plain close net/http's client returned the write error
// in most runs on a loaded machine).
func TestRefusalReachesWritingClient(t *testing.T) {
	for i := range 20 {
		ln := listen(t)
		answerEarly(t, ln, Close)
		body := io.LimitReader(endless{}, 16<<20)
		resp, err := http.Post("http://"+ln.Addr().String()+"/upload", "application/octet-stream", body)
		if err != nil {
			t.Fatalf("run %d: %v; want the 413", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || string(b) != "refused" || err != nil {
			t.Fatalf("run %d: %d %q %v; want 413 refused", i, resp.StatusCode, b, err)
		}
		waitEnded(t, fmt.Sprintf("run %d, after the client closed", i))
	}
}

// TestEndlessSenderIsCut: a client that never stops sending is cut once
// the bounds pass; the close ends and its done runs.
func TestEndlessSenderIsCut(t *testing.T) {
	ln := listen(t)
	answerEarly(t, ln, Close)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sent atomic.Int64
	go func() {
		io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n")
		buf := make([]byte, 64<<10)
		for {
			k, err := c.Write(buf)
			sent.Add(int64(k))
			if err != nil {
				return
			}
		}
	}()
	for lingering.Load() == 0 { // the server has not closed yet
		time.Sleep(time.Millisecond)
	}
	waitEnded(t, fmt.Sprintf("a client that sent %d bytes and never stops", sent.Load()))
	// The client's writes now fail: the server's side is closed.
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := c.Write(make([]byte, 64<<10)); err != nil {
			if strings.Contains(err.Error(), "timeout") {
				t.Fatalf("writes still accepted after the close: %v", err)
			}
			break
		}
	}
}

// TestQuietClientGetsEOF: a client that sent nothing more reads the end
// of the connection at once, and once it closes, the lingering close ends.
func TestQuietClientGetsEOF(t *testing.T) {
	ln := listen(t)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	Close(s)
	c.SetReadDeadline(time.Now().Add(MaxTime / 2))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("client read %v; want EOF before the close's bounds pass", err)
	}
	c.Close()
	waitEnded(t, "after the client closed")
}

// TestPastMaxLingeringClosesAtOnce: with MaxLingering closes under way, a
// connection is closed outright and nothing more lingers.
func TestPastMaxLingeringClosesAtOnce(t *testing.T) {
	ln := listen(t)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	lingering.Store(MaxLingering)
	defer lingering.Store(0)
	Close(s)
	if n := lingering.Load(); n != MaxLingering {
		t.Fatalf("%d closes linger; want %d (this one closed at once)", n, MaxLingering)
	}
	if err := s.SetReadDeadline(time.Now()); err == nil {
		t.Fatal("the server's side is still open")
	}
}
