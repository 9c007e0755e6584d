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

// A connection taken again is peeked at each time, even right after its
// answer: an upstream may close it then without saying so.
func TestPeekOnEveryReuse(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(w, r.Body)
	}))
	defer up.Close()
	var dials atomic.Int64
	tr := counting(Options{}, &dials)
	for range 3 {
		resp, err := get(t, tr, t.Context(), up.URL, strings.NewReader("ping"), -1)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ping" {
			t.Fatalf("%q %v", b, err)
		}
		resp.Body.Close()
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, cs := range tr.idle {
		if n := cs[len(cs)-1].peek.looks; n != 2 || dials.Load() != 1 {
			t.Fatalf("%d peeks and %d connections for three requests one after another, want 2 and 1", n, dials.Load())
		}
		return
	}
	t.Fatal("no idle connection")
}
