package sse

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// conn is a FlushWriter that keeps what was written and can be made to fail.
type conn struct {
	buf     bytes.Buffer
	flushes int
	err     error
}

func (c *conn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	return c.buf.Write(p)
}

func (c *conn) Flush() error { c.flushes++; return c.err }

func TestWriter(t *testing.T) {
	t.Parallel()
	c := &conn{}
	fails := 0
	w := NewWriter(c, func() { fails++ })
	if err := w.Event([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	_ = w.Comment()
	w.FinishBody([]byte(`{"r":`), func(out io.Writer) error { _, err := io.WriteString(out, `"x"`); return err })
	want := "event: message\ndata: {\"a\":1}\n\n: keep-alive\n\nevent: message\ndata: {\"r\":\"x\"}\n\n"
	if c.buf.String() != want || c.flushes != 3 {
		t.Fatalf("wrote %q with %d flushes", c.buf.String(), c.flushes)
	}
	c.err = errors.New("gone")
	if w.Event([]byte(`{}`)) == nil || w.Comment() == nil || w.Failed() == nil || fails != 1 {
		t.Fatalf("after a failed write: Failed %v, onFail ran %d times", w.Failed(), fails)
	}
}

// TestWriterKeepsNoLargeBuffer: a long-lived stream that once sent a
// large event (a listen acknowledgement echoing megabytes of URIs) does
// not keep a buffer its size; a small one is reused.
func TestWriterKeepsNoLargeBuffer(t *testing.T) {
	t.Parallel()
	w := NewWriter(&conn{}, nil)
	_ = w.Event([]byte(`{"small":true}`))
	if cap(w.buf) == 0 {
		t.Fatal("the buffer of a small event was not kept for the next")
	}
	_ = w.Event(bytes.Repeat([]byte("u"), 4<<20))
	if cap(w.buf) > maxKeptBuf {
		t.Fatalf("the writer keeps a %d-byte buffer after a 4 MiB event; want at most %d", cap(w.buf), maxKeptBuf)
	}
}

func TestStreamReplay(t *testing.T) {
	t.Parallel()
	var reg Streams
	done := make(chan struct{})
	rs := reg.New(context.Background(), done)
	first := &conn{}
	rs.Attach(NewWriter(first, nil), 0, true)
	_ = rs.Event([]byte(`{"n":1}`))
	_ = rs.Event([]byte(`{"n":2}`))
	if !strings.HasPrefix(first.buf.String(), "id: 1-1\nretry: 1000\ndata: \n\nid: 1-2\nevent: message\ndata: {\"n\":1}\n\n") {
		t.Fatalf("first connection got %q", first.buf.String())
	}
	// The connection drops; the client saw up to event 1-3 and reconnects:
	// it gets 1-4 only.
	rs.CloseConnection()
	_ = rs.Event([]byte(`{"n":3}`))
	got, after := reg.Lookup("1-3")
	if got != rs || after != 3 {
		t.Fatalf("Lookup = %p, %d", got, after)
	}
	second := &conn{}
	rel := rs.Attach(NewWriter(second, nil), after, false)
	if second.buf.String() != "id: 1-4\nevent: message\ndata: {\"n\":3}\n\n" {
		t.Fatalf("replay %q", second.buf.String())
	}
	rs.Finish([]byte(`{"n":4}`))
	rs.Serve(rel) // returns: the stream ended
	for _, bad := range []string{"", "1", "x-1", "1-y", "9-1"} {
		if s, _ := reg.Lookup(bad); s != nil {
			t.Errorf("Lookup(%q) found a stream", bad)
		}
	}
}

func TestStreamEnds(t *testing.T) {
	t.Parallel()
	var reg Streams
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, end := range []func(){func() { close(done) }, cancel} {
		rs := reg.New(ctx, done)
		rel := rs.Attach(NewWriter(&conn{}, nil), 0, true)
		served := make(chan struct{})
		go func() { rs.Serve(rel); close(served) }()
		end()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return when the session or server ended")
		}
	}
}

func TestReplayBounded(t *testing.T) {
	t.Parallel()
	var reg Streams
	rs := reg.New(context.Background(), nil)
	big := bytes.Repeat([]byte("x"), maxReplayBytes/3)
	for range 10 {
		_ = rs.Event(big)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.size > maxReplayBytes || len(rs.events) != 2 {
		t.Fatalf("kept %d events, %d bytes", len(rs.events), rs.size)
	}
}
