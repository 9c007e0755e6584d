package gateway

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/readahead"
	"github.com/mcpblob/mcpblob/core/gateway/wire"
)

// keepAliveComment goes to the client while an SSE upstream is silent.
var keepAliveComment = []byte(": keep-alive\n\n")

// copySSE relays an SSE answer like copyBody, each read flushed, and
// while the upstream is silent for KeepAlive between two events writes a
// comment line to the client: a client that left is noticed there (the
// write fails), and its upstream call ends, however long the upstream
// stays silent. The upstream is read ahead by rd (package readahead), so
// the wait can be timed; copySSE ends rd.
func (g *Gateway) copySSE(w StreamWriter, rd *readahead.Reader) error {
	defer rd.End()
	if c := rd.First; c != nil && c.Err != nil && rd.Second == nil { // read whole already: no wait to time
		rd.First = nil
		err := g.relayChunk(w, (*c.Buf)[:c.N])
		rd.Release(c.Buf)
		if err != nil {
			return err
		}
		return g.readEnd(c.Err)
	}
	tick := time.NewTicker(g.opts.KeepAlive)
	defer tick.Stop()
	var tail []byte // the last bytes relayed: is the stream between events?
	last := time.Now()
	for {
		var c readahead.Chunk
		if rd.First != nil {
			c, rd.First, rd.Second = *rd.First, rd.Second, nil
		} else {
			select {
			case c = <-rd.Reads():
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
		err := g.relayChunk(w, (*c.Buf)[:c.N])
		if err == nil {
			tail = wire.AppendTail(tail, (*c.Buf)[:c.N])
			last = time.Now()
		}
		rd.Release(c.Buf)
		switch {
		case err != nil:
			return err
		case c.Err != nil:
			return g.readEnd(c.Err)
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
