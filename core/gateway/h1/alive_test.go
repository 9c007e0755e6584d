//go:build unix

package h1

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An idle connection is looked at without an allocation, and one its peer
// closed is seen closed.
func TestPeekerAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); accepted <- c }()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	peer := <-accepted
	p := newPeeker(nc)
	if !p.alive() {
		t.Fatal("an open idle connection was seen closed")
	}
	if n := testing.AllocsPerRun(100, func() { p.alive() }); n != 0 {
		t.Errorf("%.0f allocations per look; want none", n)
	}
	peer.Close()
	deadline := time.Now().Add(2 * time.Second)
	for p.alive() {
		if time.Now().After(deadline) {
			t.Fatal("a connection its peer closed is still seen open")
		}
		time.Sleep(time.Millisecond)
	}
}

// A connection taken again right after its answer goes out without a
// peek (a system call a request under load need not pay); one idle past
// peekAfter is looked at first. (The bound is widened, then narrowed, so
// that a stalled machine cannot flip either half.)
func TestPeekOnlyAfterIdle(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(w, r.Body)
	}))
	defer up.Close()
	var dials atomic.Int64
	tr := counting(Options{}, &dials)
	tr.peekAfter = time.Minute
	roundTrip := func() {
		resp, err := get(t, tr, t.Context(), up.URL, strings.NewReader("ping"), -1)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ping" {
			t.Fatalf("%q %v", b, err)
		}
		resp.Body.Close()
	}
	looks := func() int {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, cs := range tr.idle {
			return cs[len(cs)-1].peek.looks
		}
		t.Fatal("no idle connection")
		return 0
	}
	for range 3 {
		roundTrip()
	}
	if n := looks(); n != 0 || dials.Load() != 1 {
		t.Fatalf("%d peeks and %d connections for requests one after another, want 0 and 1", n, dials.Load())
	}
	tr.peekAfter = time.Millisecond
	time.Sleep(5 * time.Millisecond)
	roundTrip()
	if n := looks(); n != 1 || dials.Load() != 1 {
		t.Fatalf("%d peeks and %d connections after an idle past peekAfter, want 1 and 1", n, dials.Load())
	}
}
