package h1

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestChunksEnd(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"0\r\n\r\n", true},
		{"5\r\nhello\r\n0\r\n\r\n", true},
		{"5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\n\r\n", true},
		{"5\r\nhello\r\n", false},           // no last chunk yet
		{"5\r\nhello\r\n0\r\n", false},      // its end not in
		{"5\r\nhel", false},                 // a chunk cut
		{"5\r\nhelloX\r\n0\r\n\r\n", false}, // bad framing
		{"0\r\nTrailer: x\r\n\r\n", false},  // a trailer
		{"zz\r\nhello\r\n0\r\n\r\n", false}, // not hex
		{"5\nhello\r\n0\r\n\r\n", false},    // a bare LF
		{"", false},
	} {
		if got := chunksEnd([]byte(c.in)); got != c.want {
			t.Errorf("chunksEnd(%q) = %v; want %v", c.in, got, c.want)
		}
	}
}

// scripted answers one request on one connection with parts, written one
// by one, each after the first once a value comes on gate; with no gate
// the connection then closes, else it stays open until the client closes
// it.
func scripted(t *testing.T, parts []string, gate chan struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		for i, p := range parts {
			if i > 0 && gate != nil {
				<-gate
			}
			if _, err := io.WriteString(nc, p); err != nil {
				return
			}
		}
		if gate != nil {
			_, _ = io.Copy(io.Discard, nc) // open until the client closes
		}
	}()
	return "http://" + ln.Addr().String()
}

// InBuffer is true when the whole body came with the headers (chunked or
// of a declared length), false while its end is still to come, and false
// for a body that ends with the connection; the body reads the same.
func TestInBuffer(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	for _, c := range []struct {
		name  string
		parts []string
		want  bool
	}{
		{"chunked whole", []string{head + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"}, true},
		{"chunked, end later", []string{head + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "0\r\n\r\n"}, false},
		{"length whole", []string{head + "Content-Length: 5\r\n\r\nhello"}, true},
		{"length, rest later", []string{head + "Content-Length: 5\r\n\r\nhel", "lo"}, false},
		{"to the close", []string{head + "Connection: close\r\n\r\nhello"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			gate := make(chan struct{}, 1)
			tr := New(Options{})
			defer tr.CloseIdle()
			resp, err := get(t, tr, t.Context(), scripted(t, c.parts, gate), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got := resp.Body.(interface{ InBuffer() bool }).InBuffer()
			gate <- struct{}{}
			if got != c.want {
				t.Errorf("InBuffer = %v; want %v", got, c.want)
			}
			if c.name == "to the close" {
				return // the scripted server keeps the connection open
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || string(b) != "hello" {
				t.Fatalf("body %q, %v; want hello", b, err)
			}
			if resp.Body.(interface{ InBuffer() bool }).InBuffer() != true {
				t.Error("InBuffer of a body read to its end is false")
			}
		})
	}
}

// WaitEnd sees a body's end that comes within its wait, and gives up on
// one that does not; the body reads whole either way.
func TestWaitEnd(t *testing.T) {
	const answer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
	for _, comes := range []bool{true, false} {
		gate := make(chan struct{}, 1)
		tr := New(Options{})
		resp, err := get(t, tr, t.Context(), scripted(t, []string{answer, "0\r\n\r\n"}, gate), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		wait := 20 * time.Millisecond
		if comes {
			gate <- struct{}{}
			wait = 10 * time.Second // the end comes: no need to wait this long
		}
		b := resp.Body.(interface{ WaitEnd(time.Duration) bool })
		if got := b.WaitEnd(wait); got != comes {
			t.Errorf("WaitEnd with the end coming %v = %v", comes, got)
		}
		if !comes {
			gate <- struct{}{}
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || string(body) != "hello" {
			t.Fatalf("body %q, %v; want hello", body, err)
		}
		resp.Body.Close()
		tr.CloseIdle()
	}
}
