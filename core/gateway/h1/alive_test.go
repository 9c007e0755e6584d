//go:build unix

package h1

import (
	"net"
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
