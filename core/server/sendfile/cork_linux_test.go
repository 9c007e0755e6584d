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

// corkWatch is the server side's writer: it records TCP_CORK whenever the
// body reaches ReadFrom (the sendfile call).
type corkWatch struct {
	*bufio.Writer
	t    *testing.T
	conn net.Conn
	seen []int
}

func (w *corkWatch) ReadFrom(r io.Reader) (int64, error) {
	w.seen = append(w.seen, corkOf(w.t, w.conn))
	return w.Writer.ReadFrom(r)
}

// The socket is corked while the file goes out and uncorked after, and
// every byte arrives.
func TestBodyCorksTheSocket(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (Chunk+12345)/16)
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
	n, err := NewBody(f, int64(len(data)), f, server, 0).WriteTo(w)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	if len(w.seen) != 2 || w.seen[0] != 1 || w.seen[1] != 1 {
		t.Errorf("TCP_CORK during the rounds: %v, want [1 1] (two rounds, corked)", w.seen)
	}
	if c := corkOf(t, server); c != 0 {
		t.Errorf("TCP_CORK after the body: %d, want 0", c)
	}
	if b := <-got; !bytes.Equal(b, append([]byte("HTTP"), data...)) {
		t.Errorf("received %d bytes, want the header and %d", len(b), len(data))
	}
}
