package sendfile

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// corkOf reads TCP_CORK on conn's socket.
func corkOf(t *testing.T, conn net.Conn) int {
	t.Helper()
	raw, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	v := -1
	raw.Control(func(fd uintptr) { v, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK) })
	return v
}

// round is what the server side saw when one round of the body reached
// ReadFrom (the sendfile call): how many bytes, TCP_CORK, and the socket's
// TCP_INFO.
type round struct {
	bytes                  int64
	cork                   int
	notsent, unacked, cwnd uint32
}

// corkWatch is the server side's writer: it records each round.
type corkWatch struct {
	*bufio.Writer
	t      *testing.T
	conn   net.Conn
	rounds []round
}

func (w *corkWatch) ReadFrom(r io.Reader) (int64, error) {
	rd := round{bytes: r.(*io.LimitedReader).N, cork: corkOf(w.t, w.conn)}
	raw, _ := w.conn.(syscall.Conn).SyscallConn()
	raw.Control(func(fd uintptr) {
		if ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			rd.notsent, rd.unacked, rd.cwnd = ti.Notsent_bytes, ti.Unacked, ti.Snd_cwnd
		}
	})
	w.rounds = append(w.rounds, rd)
	return w.Writer.ReadFrom(r)
}

// serveOver sends size bytes of a file (after "HTTP" buffered as the
// headers) over a loopback connection read by a client to the end, and
// returns the rounds the server side saw.
func serveOver(t *testing.T, size int) []round {
	t.Helper()
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(io.LimitReader(client, int64(len(data)+4))); got <- b }()

	w := &corkWatch{Writer: bufio.NewWriter(server), t: t, conn: server}
	w.WriteString("HTTP")
	n, err := NewBody(f, int64(len(data)), f, server, time.Minute).WriteTo(w)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	if c := corkOf(t, server); c != 0 {
		t.Errorf("TCP_CORK after the body: %d, want 0", c)
	}
	if b := <-got; !bytes.Equal(b, append([]byte("HTTP"), data...)) {
		t.Errorf("received %d bytes, want the header and %d", len(b), len(data))
	}
	return w.rounds
}

// The socket is corked while the file goes out, all but its last byte, and
// uncorked after; every byte arrives.
func TestBodyCorksTheSocket(t *testing.T) {
	rounds := serveOver(t, FirstRound+Chunk+12345)
	if len(rounds) != 4 {
		t.Fatalf("rounds: %+v, want 4 (the first round, a Chunk, the rest but one byte, the last byte)", rounds)
	}
	for i, want := range []round{{bytes: FirstRound, cork: 1}, {bytes: Chunk, cork: 1}, {bytes: 12344, cork: 1}, {bytes: 1, cork: 0}} {
		if rounds[i].bytes != want.bytes || rounds[i].cork != want.cork {
			t.Errorf("round %d: %d bytes with TCP_CORK %d, want %d bytes with %d", i, rounds[i].bytes, rounds[i].cork, want.bytes, want.cork)
		}
	}
}

// The body's last byte is sent by a call of its own, made only once the
// socket has sent everything before it and its congestion window has
// room: the state in which the kernel marks the send, and the rate sample
// of its ACK, application-limited (see Body.WriteTo). A final segment
// released by pulling the cork never is, and its late-ACKed sample set the
// next response's pace.
func TestBodyLastByteGoesOutOnADrainedSocket(t *testing.T) {
	for _, size := range []int{1, 4 << 10, 1 << 20, 1<<20 + 1234} {
		rounds := serveOver(t, size)
		last := rounds[len(rounds)-1]
		if last.bytes != 1 || last.cork != 0 {
			t.Errorf("%d bytes: last round %d bytes with TCP_CORK %d, want 1 byte, uncorked", size, last.bytes, last.cork)
		}
		if last.notsent != 0 || last.unacked >= last.cwnd {
			t.Errorf("%d bytes: last round on a socket with %d bytes not sent, %d segments unacked, cwnd %d; want nothing unsent and room in the window",
				size, last.notsent, last.unacked, last.cwnd)
		}
		for i, r := range rounds[:len(rounds)-1] {
			if r.cork != 1 {
				t.Errorf("%d bytes: round %d (%d bytes) uncorked", size, i, r.bytes)
			}
		}
	}
}

// The headers ride corked with the body's first bytes, so the first
// sendfile round is small: it returns once FirstRound bytes are queued
// instead of after megabytes, and the client gets the headers and its
// first body byte that much sooner; the Chunk rounds follow. A file a
// little over FirstRound goes out as the first round, the rest, the last
// byte.
func TestBodyFirstRoundIsSmall(t *testing.T) {
	for _, size := range []int{8 << 20, FirstRound + 2} {
		rounds := serveOver(t, size)
		if rounds[0].bytes != FirstRound || rounds[0].cork != 1 {
			t.Errorf("%d bytes: first round %d bytes with TCP_CORK %d, want %d, corked", size, rounds[0].bytes, rounds[0].cork, FirstRound)
		}
		var sum int64
		for _, r := range rounds {
			sum += r.bytes
		}
		if sum != int64(size) || len(rounds) != 3 {
			t.Errorf("%d bytes: rounds %+v, want 3 adding up to the file", size, rounds)
		}
	}
}
