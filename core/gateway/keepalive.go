package gateway

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/wire"
)

// keepAliveComment goes to the client while an SSE upstream is silent.
var keepAliveComment = []byte(": keep-alive\n\n")

// copySSE relays an SSE answer like copyBody, each read flushed, and
// while the upstream is silent for KeepAlive between two events writes a
// comment line to the client: a client that left is noticed there (the
// write fails), and its upstream call ends, however long the upstream
// stays silent. The upstream is read by rd (startSSE), so the wait can be
// timed; copySSE ends rd.
func (g *Gateway) copySSE(w StreamWriter, rd *sseReader) error {
	defer rd.end()
	if c := rd.first; c != nil && c.err != nil && rd.second == nil { // read whole already: no wait to time
		rd.first = nil
		err := g.relayChunk(w, (*c.buf)[:c.n])
		rd.free <- c.buf // room: two buffers, and this one is out
		if err != nil {
			return err
		}
		return g.readEnd(c.err)
	}
	tick := time.NewTicker(g.opts.KeepAlive)
	defer tick.Stop()
	var tail []byte // the last bytes relayed: is the stream between events?
	last := time.Now()
	for {
		var c sseChunk
		if rd.first != nil {
			c, rd.first, rd.second = *rd.first, rd.second, nil
		} else {
			select {
			case c = <-rd.reads:
			case now := <-tick.C:
				if now.Sub(last) < g.opts.KeepAlive || !wire.BetweenEvents(tail) {
					continue
				}
				if _, err := w.Write(keepAliveComment); err != nil {
					return err
				}
				if err := w.Flush(); err != nil {
					return err
				}
				continue
			}
		}
		err := g.relayChunk(w, (*c.buf)[:c.n])
		if err == nil {
			tail = wire.AppendTail(tail, (*c.buf)[:c.n])
			last = time.Now()
		}
		rd.free <- c.buf // room: two buffers, and this one is out
		switch {
		case err != nil:
			return err
		case c.err != nil:
			return g.readEnd(c.err)
		}
	}
}

// firstEventWait is how long an open event stream's headers wait for its
// first bytes, to go out with them in one write (an upstream's first event
// is most often read with its headers); a silent upstream's headers go out
// alone after it (openStream).
const firstEventWait = time.Millisecond

// wholeWait is how long an SSE answer's first read waits for its end:
// firstEventWait, or nothing when that was spent already (waited).
func wholeWait(waited bool) time.Duration {
	if waited {
		return 0
	}
	return firstEventWait
}

// sseReader reads an SSE answer on a goroutine of its own, through two
// pooled buffers, until the body ends or end is called; the goroutine ends
// with the body, which the caller closes. Each buffer goes back to the pool
// from the side that holds it last (end, putFree).
type sseReader struct {
	reads  chan sseChunk
	free   chan *[]byte
	stop   chan struct{}
	first  *sseChunk // read by waitFirst and not yet relayed
	second *sseChunk // read by whole and not yet relayed
	timer  *time.Timer
}

// sseChunk is one read of an SSE answer.
type sseChunk struct {
	buf *[]byte
	n   int
	err error
}

// startSSE starts reading body. When the transport holds the whole of
// it (inBuffer), its first buffer is read here, on the caller's goroutine:
// an answer that ends in it is then rd.first with its end (io.EOF), and
// no reader goroutine starts.
func startSSE(body io.Reader, inBuffer bool) *sseReader {
	rd := &sseReader{reads: make(chan sseChunk), free: make(chan *[]byte, 2), stop: make(chan struct{})}
	rd.free <- copyBuffers.Get().(*[]byte)
	rd.free <- copyBuffers.Get().(*[]byte)
	if inBuffer {
		bp := <-rd.free
		n, err := fill(body, *bp)
		rd.first = &sseChunk{bp, n, err}
		if err != nil {
			return rd // the answer's end: nothing left to read
		}
	}
	go rd.run(body)
	return rd
}

// fill reads body into p until p is full, the body ends or a read brings
// nothing.
func fill(body io.Reader, p []byte) (n int, err error) {
	for n < len(p) && err == nil {
		var k int
		k, err = body.Read(p[n:])
		n += k
		if k == 0 {
			break
		}
	}
	return n, err
}

func (rd *sseReader) run(body io.Reader) {
	for {
		var bp *[]byte
		select {
		case bp = <-rd.free:
		case <-rd.stop:
			return
		}
		n, err := body.Read(*bp)
		select {
		case rd.reads <- sseChunk{bp, n, err}:
		case <-rd.stop:
			copyBuffers.Put(bp) // never handed over: this side holds it last
			return
		}
		if err != nil {
			return
		}
	}
}

// await waits up to d for the reader's next read (one timer for the
// reader's waits).
func (rd *sseReader) await(d time.Duration) (sseChunk, bool) {
	if rd.timer == nil {
		rd.timer = time.NewTimer(d)
	} else {
		rd.timer.Reset(d)
	}
	defer rd.timer.Stop()
	select {
	case c := <-rd.reads:
		return c, true
	case <-rd.timer.C:
		return sseChunk{}, false
	}
}

// waitFirst waits up to d for the first read and keeps it for copySSE;
// it reports whether the read came.
func (rd *sseReader) waitFirst(d time.Duration) bool {
	c, ok := rd.await(d)
	if ok {
		rd.first = &c
	}
	return ok
}

// whole reports whether the first read (waitFirst) is the whole answer:
// it ended the body, or the next read, within d, ends it with nothing more.
// A next read with more is kept for copySSE.
func (rd *sseReader) whole(d time.Duration) bool {
	if rd.first.err != nil {
		return errors.Is(rd.first.err, io.EOF)
	}
	c, ok := rd.await(d)
	switch {
	case !ok:
		return false
	case c.n == 0 && errors.Is(c.err, io.EOF):
		rd.free <- c.buf // room: two buffers, and this one is out
		rd.first.err = io.EOF
		return true
	}
	rd.second = &c
	return false
}

// end stops the reader and puts the buffers it does not hold back in the
// pool.
func (rd *sseReader) end() {
	close(rd.stop)
	for _, c := range []*sseChunk{rd.first, rd.second} {
		if c != nil {
			rd.free <- c.buf // room: two buffers, and this one is out
		}
	}
	rd.first, rd.second = nil, nil
	putFree(rd.free)
}

// putFree puts the buffers left in free back in the pool, once an sseReader
// was told to stop: a buffer in free is taken by one side only (the
// reader, which then puts it back itself, or this), a buffer the reader
// holds goes back from the reader, and one handed over is in free again.
func putFree(free chan *[]byte) {
	for {
		select {
		case bp := <-free:
			copyBuffers.Put(bp)
		default:
			return
		}
	}
}

// openStream starts an SSE answer of no declared length (an open event
// stream) with w flushed, before any event: the status and headers reach
// the client as soon as the upstream sent them, however long the upstream
// then stays silent. An upstream may open an event stream with its headers
// alone (the TypeScript SDK's server does on the standalone GET stream),
// and a client may wait for them before anything else (go-sdk's client
// waits for the GET's answer inside Connect). An answer of known length is
// whole at the upstream already: its headers go with its first bytes.
func openStream(w StreamWriter, resp *http.Response) error {
	if resp.ContentLength >= 0 {
		return nil
	}
	return w.Flush()
}

// relayChunk writes p to the client and flushes it.
func (g *Gateway) relayChunk(w StreamWriter, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if _, err := w.Write(p); err != nil {
		return err // the client went away: the caller's cancel ends the upstream call
	}
	g.metrics.Relayed("to_client", int64(len(p)))
	return w.Flush()
}

// readEnd is the end of a relayed answer: nil at its end, else the
// upstream broke off (logged once; the transport cuts the response).
func (g *Gateway) readEnd(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	g.metrics.Upstream(kindBroken, 0)
	g.log.Warn("gateway: upstream answer broke off", "kind", kindBroken, "upstream", g.Upstream())
	return errors.New("gateway: the upstream's answer broke off")
}
