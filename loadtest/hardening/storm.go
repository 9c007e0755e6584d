package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// slowConn is one storm connection: it writes head and prefix, then one
// byte of filler every interval until hold ends, while a reader waits for
// whatever the server answers.
type slowConn struct {
	head, prefix string
	filler       byte
	sh           wire.Shape
	keep         bool // after an answer, keep the connection open (kept-alive clients)

	answer *wire.Answer // set by the reader when the server answered
	closed bool         // the server closed (or reset) the connection without an answer
}

// stormTally counts how storm connections ended.
type stormTally struct {
	opened, dialFailed, answered, closed, open int
	statuses                                   map[int]int
}

// runConns dials every connection, trickles on all of them until hold has
// passed since the last was opened, then closes them all and tallies how
// each ended.
func runConns(ctx context.Context, addr string, conns []*slowConn, every, hold time.Duration) stormTally {
	var wg sync.WaitGroup
	var opened atomic.Int64
	stop := make(chan struct{})
	var t stormTally
	failed := make([]bool, len(conns))
	for i, sc := range conns {
		c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			failed[i] = true
			continue
		}
		opened.Add(1)
		wg.Go(func() { sc.run(c, every, stop) })
	}
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	close(stop)
	wg.Wait()
	t.statuses = map[int]int{}
	for i, sc := range conns {
		switch {
		case failed[i]:
			t.dialFailed++
		case sc.answer != nil:
			t.answered++
			t.statuses[sc.answer.Status]++
		case sc.closed:
			t.closed++
		default:
			t.open++
		}
	}
	t.opened = int(opened.Load())
	return t
}

// run writes and trickles until stop, or until the server answers or
// closes; then it closes the connection.
func (sc *slowConn) run(c net.Conn, every time.Duration, stop <-chan struct{}) {
	defer c.Close()
	got := make(chan struct{})
	go func() {
		defer close(got)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return
		}
		sc.answer = wire.ReadAnswer(resp, nil)
		resp.Body.Close()
	}()
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(sc.head + sc.prefix)); err != nil {
		sc.closed = true
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			c.Close()
			<-got
			return
		case <-got:
			sc.closed = sc.answer == nil
			if sc.keep && sc.answer != nil {
				<-stop
			}
			return
		case <-tick.C:
			if sc.filler == 0 {
				continue
			}
			c.SetWriteDeadline(time.Now().Add(every))
			if _, err := c.Write([]byte{sc.filler}); err != nil {
				c.Close()
				<-got
				sc.closed = sc.answer == nil
				return
			}
		}
	}
}
