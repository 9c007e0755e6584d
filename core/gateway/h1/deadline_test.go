//go:build unix

package h1

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// deadlineCounting is a TCP connection whose SetReadDeadline calls are
// counted.
type deadlineCounting struct {
	*net.TCPConn
	n *atomic.Int64
}

func (c deadlineCounting) SetReadDeadline(t time.Time) error {
	c.n.Add(1)
	return c.TCPConn.SetReadDeadline(t)
}

func deadlineTransport(o Options, sets, dials *atomic.Int64) *Transport {
	o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		dials.Add(1)
		return deadlineCounting{nc.(*net.TCPConn), sets}, nil
	}
	return New(o)
}

// A kept-alive connection whose answers its buffer holds whole keeps the
// header wait's read deadline from one request to the next while it is
// far enough: not two deadline changes (a runtime timer each) per request.
func TestHeaderDeadlineKept(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	defer up.Close()
	var sets, dials atomic.Int64
	tr := deadlineTransport(Options{HeaderTimeout: time.Minute}, &sets, &dials)
	const n = 20
	for i := range n {
		if got, err := postWhole(tr, t.Context(), up.URL, []byte("ping")); err != nil || got != "ping" {
			t.Fatalf("request %d: %q %v", i, got, err)
		}
	}
	if dials.Load() != 1 || sets.Load() > 2 {
		t.Errorf("%d read deadlines set for %d requests on %d connections, want at most 2 on one", sets.Load(), n, dials.Load())
	}
}

// A deadline left by an earlier request neither cuts a body that streams
// (it is removed when the body is not all in the buffer) nor fails the
// peek at a connection reused after it passed.
func TestHeaderDeadlineLeftBehind(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slow" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		for range 4 { // a body that takes longer than HeaderTimeout and its slack
			_, _ = w.Write([]byte("part "))
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
	}))
	defer up.Close()
	var sets, dials atomic.Int64
	tr := deadlineTransport(Options{HeaderTimeout: 50 * time.Millisecond}, &sets, &dials)
	for i, path := range []string{"/", "/slow", "/", "/pause", "/"} {
		if path == "/pause" {
			time.Sleep(120 * time.Millisecond) // the deadline left by the last request passes
			continue
		}
		got, err := postWhole(tr, t.Context(), up.URL+path, []byte("x"))
		want := "ok"
		if path == "/slow" {
			want = strings.Repeat("part ", 4)
		}
		if err != nil || got != want {
			t.Fatalf("request %d (%s): %q %v", i, path, got, err)
		}
	}
	if dials.Load() != 1 {
		t.Errorf("%d connections, want one kept alive", dials.Load())
	}
}
