package bodystream

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// deadlineConn records the write deadlines set on it and discards writes.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error { c.set = append(c.set, t); return nil }
func (c *deadlineConn) Write(p []byte) (int, error)        { return len(p), nil }

// writeChunks is a body of n writes of size bytes each.
func writeChunks(n, size int) func(mcp.StreamWriter) error {
	return func(w mcp.StreamWriter) error {
		for range n {
			if _, err := w.Write(make([]byte, size)); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestDeadlineOnlyWhenWritesReachTheConnection: a body that fits in the
// write buffer sets no deadline at all (nothing reaches the socket while it
// runs); one that overflows it sets a deadline before each write that
// reaches the connection, and clears it at the end.
func TestDeadlineOnlyWhenWritesReachTheConnection(t *testing.T) {
	conn := &deadlineConn{}
	bw := bufio.NewWriterSize(conn, 4096)
	if _, err := New(writeChunks(3, 1000), conn, time.Minute).WriteTo(bw); err != nil {
		t.Fatal(err)
	}
	if len(conn.set) != 0 {
		t.Errorf("a body held in the buffer set %d deadlines, want none", len(conn.set))
	}
	bw.Reset(conn)
	conn.set = nil
	start := time.Now()
	if _, err := New(writeChunks(10, 1000), conn, time.Minute).WriteTo(bw); err != nil {
		t.Fatal(err)
	}
	// 10 writes of 1000 into 4096 bytes: writes 5 and 9 overflow the buffer.
	if len(conn.set) != 3 {
		t.Fatalf("deadlines set %v, want 2 renewals and the clearing", conn.set)
	}
	for _, d := range conn.set[:2] {
		if d.Before(start.Add(time.Minute)) || d.After(time.Now().Add(time.Minute)) {
			t.Errorf("deadline %v is not a minute after the write", d)
		}
	}
	if !conn.set[2].IsZero() {
		t.Errorf("the deadline was left at %v, want cleared", conn.set[2])
	}
}

// TestDeadlineStalledClient: a client that stops reading fails the body
// within the timeout, though the first writes fitted in the buffer.
func TestDeadlineStalledClient(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	defer server.Close()
	bw := bufio.NewWriterSize(server, 4096)
	done := make(chan error, 1)
	go func() {
		_, err := New(writeChunks(100, 1000), server, 50*time.Millisecond).WriteTo(bw)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("WriteTo: %v, want the deadline exceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stalled client held the body for 10 s past a 50 ms write deadline")
	}
}

// TestNewCounted: the one-allocation counted stream sends, counts and
// reports like Count(New(...)), and its body runs once.
func TestNewCounted(t *testing.T) {
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	runs := 0
	body := NewCounted(func(w mcp.StreamWriter) error { runs++; return writeChunks(3, 100)(w) }, &deadlineConn{}, time.Minute)
	var sent int64 = -1
	body.OnFinish(func(n int64) { sent = n })
	if n, err := body.WriteTo(bw); err != nil || n != 300 {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	if n, err := body.WriteTo(bw); err == nil || n != 0 {
		t.Errorf("second WriteTo: %d, %v; want 0 and an error", n, err)
	}
	body.Close()
	if bw.Flush(); out.Len() != 300 || sent != 300 || runs != 1 {
		t.Errorf("wrote %d bytes, reported %d, body ran %d times; want 300, 300, 1", out.Len(), sent, runs)
	}
}
