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

// waitLingering waits until a close lingers.
func waitLingering(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); lingering.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not close")
		}
	}
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

// connPair returns both ends of a new loopback connection: the client's
// (closed when the test ends) and the server's.
func connPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln := listen(t)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if server, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	return client, server
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
// MaxBytes are dropped; the close ends.
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
	waitLingering(t)
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
	c, s := connPair(t)
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
	_, s := connPair(t)
	waitEnded(t, "before the test")
	lingering.Add(MaxLingering)
	defer lingering.Add(-MaxLingering)
	Close(s)
	if n := lingering.Load(); n != MaxLingering {
		t.Fatalf("%d closes linger; want %d (this one closed at once)", n, MaxLingering)
	}
	if err := s.SetReadDeadline(time.Now()); err == nil {
		t.Fatal("the server's side is still open")
	}
}

// timedClose closes the server's side of a new connection, whose client
// then runs client, and returns how long the close lingered.
func timedClose(t *testing.T, client func(net.Conn)) time.Duration {
	t.Helper()
	c, s := connPair(t)
	go client(c)
	start := time.Now()
	Close(s)
	waitEnded(t, "a client that does not close")
	return time.Since(start)
}

// setBounds sets the time bounds for one test.
func setBounds(t *testing.T, max, quiet time.Duration) {
	waitEnded(t, "before the test")
	maxTime, silence = max, quiet
	t.Cleanup(func() { maxTime, silence = MaxTime, Silence })
}

// TestSilentClientIsCut: a client that neither sends nor closes is cut
// after Silence, long before MaxTime.
func TestSilentClientIsCut(t *testing.T) {
	setBounds(t, time.Minute, 100*time.Millisecond)
	if d := timedClose(t, func(net.Conn) {}); d >= 30*time.Second {
		t.Fatalf("the close lingered %v on a silent client; want about Silence (100 ms), not MaxTime (1 min)", d)
	}
}

// TestTricklingClientIsCut: a client that sends a byte every 20 ms, never
// silent for Silence, is cut once MaxTime passes.
func TestTricklingClientIsCut(t *testing.T) {
	setBounds(t, time.Second, 5*time.Second)
	d := timedClose(t, func(c net.Conn) {
		for {
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	if d < time.Second || d >= 5*time.Second {
		t.Fatalf("the close lingered %v on a trickling client; want MaxTime (1 s), less than Silence (5 s)", d)
	}
}
