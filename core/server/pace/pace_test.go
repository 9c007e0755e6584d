package pace

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestUploadSlots(t *testing.T) {
	t.Parallel()
	u := Slots{Max: 3, PerMax: 2}
	a1, _ := u.Acquire("a")
	a2, _ := u.Acquire("a")
	if _, st := u.Acquire("a"); st != http.StatusTooManyRequests {
		t.Fatalf("third of a's: %d, want 429", st)
	}
	b1, _ := u.Acquire("b")
	if _, st := u.Acquire("c"); st != http.StatusServiceUnavailable {
		t.Fatalf("fourth in all: %d, want 503", st)
	}
	a1()
	a1() // twice is once
	if r, st := u.Acquire("c"); r == nil {
		t.Fatalf("after a release: %d", st)
	}
	a2()
	b1()
	if u.n != 1 || len(u.per) != 1 {
		t.Fatalf("left: %d in all, %v", u.n, u.per)
	}
}

// loopbackPair returns both ends of a loopback TCP connection.
func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestPaceReader: a body below the rate is cut off with a timeout soon
// after its grace; a steady one at twice the rate is not; time the server
// spends not reading is not charged to the client. Not parallel: its
// bounds are wall-clock times, kept clear of the package's other tests.
func TestPaceReader(t *testing.T) {
	newPace := func(conn net.Conn) *Reader {
		return NewReader(conn, conn, 64<<10, 300*time.Millisecond, time.Second, nil)
	}
	t.Run("trickle", func(t *testing.T) {
		client, server := loopbackPair(t)
		go func() {
			for range 40 {
				if _, err := client.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		p, start := newPace(server), time.Now()
		_, err := io.Copy(io.Discard, p)
		if !isTimeout(err) || !p.Expired {
			t.Fatalf("trickle: %v, want a timeout", err)
		}
		if d := time.Since(start); d < 250*time.Millisecond || d > time.Second {
			t.Errorf("trickle cut off after %v, want about the 300 ms grace", d)
		}
	})
	t.Run("steady", func(t *testing.T) {
		client, server := loopbackPair(t)
		data := randomBytes(128 << 10)
		go func() {
			// 8 KiB every 62.5 ms: 128 KiB/s, twice the rate.
			for off := 0; off < len(data); off += 8 << 10 {
				if _, err := client.Write(data[off : off+8<<10]); err != nil {
					return
				}
				time.Sleep(time.Second / 16)
			}
			client.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(newPace(server))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("steady: %v after %d bytes", err, len(got))
		}
	})
	t.Run("server pause", func(t *testing.T) {
		client, server := loopbackPair(t)
		client.Write(make([]byte, 100))
		p := newPace(server)
		time.Sleep(600 * time.Millisecond) // longer than the grace: not the client's fault
		if n, err := p.Read(make([]byte, 100)); n != 100 || err != nil {
			t.Fatalf("after the server's pause: %d, %v", n, err)
		}
		if _, err := p.Read(make([]byte, 1)); !isTimeout(err) {
			t.Fatalf("a client that sends nothing more: %v, want a timeout", err)
		}
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
