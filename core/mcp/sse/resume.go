package sse

// SSE resumability for 2025-11-25 sessions (SEP-1699). A POST answered with
// SSE becomes a resumable stream: it starts with a priming event (an id,
// a retry hint, empty data), every later event carries an id
// "<stream>-<seq>" unique within the session, and events are kept (up to
// maxReplayBytes per stream) until the stream ends and a grace period
// passes. The call runs independently of the connection: a dropped
// connection is not a cancellation (notifications/cancelled is); the client
// reconnects with GET and Last-Event-ID, gets the events it missed and then
// the rest of the stream on that connection. A blob read's single large
// event is not kept for replay.

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	maxReplayBytes  = 256 << 10
	replayGrace     = time.Minute
	maxStreamsKept  = 32
	retryHintMillis = 1000
)

type storedEvent struct {
	seq   int64
	frame []byte
}

// Stream is one resumable SSE stream of a session: what the call that feeds
// it sends (Event, Comment, Finish, FinishBody) goes to its current
// connection, if any, and is kept for replay.
type Stream struct {
	id          int64
	sessionDone <-chan struct{} // closed when the session ends
	base        context.Context // ends when the server closes

	mu       sync.Mutex
	seq      int64
	events   []storedEvent
	size     int
	conn     *Writer
	release  chan struct{} // closed when the current connection must end
	done     bool
	finished time.Time
}

// Streams is one session's registry of resumable streams. The zero value
// is ready to use.
type Streams struct {
	mu   sync.Mutex
	m    map[int64]*Stream
	next int64
}

// New registers a new stream of the session, dropping streams that ended
// more than a grace period ago (or, with too many kept, any that ended).
// Its connections end when base ends (the server closes) or sessionDone
// is closed (the session ends).
func (r *Streams) New(base context.Context, sessionDone <-chan struct{}) *Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int64]*Stream{}
	}
	now := time.Now()
	for id, rs := range r.m {
		rs.mu.Lock()
		stale := rs.done && now.Sub(rs.finished) > replayGrace
		rs.mu.Unlock()
		if stale || (len(r.m) >= maxStreamsKept && rs.doneNow()) {
			delete(r.m, id)
		}
	}
	r.next++
	rs := &Stream{id: r.next, sessionDone: sessionDone, base: base}
	r.m[rs.id] = rs
	return rs
}

func (rs *Stream) doneNow() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.done
}

// Lookup finds the stream a Last-Event-ID names and the sequence number
// after which to replay; nil when there is none.
func (r *Streams) Lookup(lastEventID string) (*Stream, int64) {
	sid, seqStr, ok := strings.Cut(lastEventID, "-")
	if !ok {
		return nil, 0
	}
	id, err1 := strconv.ParseInt(sid, 10, 64)
	seq, err2 := strconv.ParseInt(seqStr, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[id], seq
}

func (rs *Stream) eventID(seq int64) string {
	return strconv.FormatInt(rs.id, 10) + "-" + strconv.FormatInt(seq, 10)
}

// Attach makes conn the stream's connection: it ends the previous one,
// writes the priming event (first connection) or replays the events after
// seq (reconnection), and returns the channel that tells conn to end
// (see [Stream.Serve]).
func (rs *Stream) Attach(conn *Writer, after int64, priming bool) <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.release != nil {
		close(rs.release)
	}
	rel := make(chan struct{})
	rs.conn, rs.release = conn, rel
	if priming {
		rs.seq++
		frame := "id: " + rs.eventID(rs.seq) + "\nretry: " + strconv.Itoa(retryHintMillis) + "\ndata: \n\n"
		if conn.raw([]byte(frame)) != nil {
			rs.detachLocked()
			return rel
		}
	}
	for _, ev := range rs.events {
		if ev.seq > after && conn.raw(ev.frame) != nil {
			rs.detachLocked()
			return rel
		}
	}
	if rs.done {
		rs.detachLocked()
	}
	return rel
}

func (rs *Stream) detachLocked() {
	if rs.release != nil {
		close(rs.release)
		rs.release = nil
	}
	rs.conn = nil
}

// Serve blocks until the connection Attach returned rel for must end.
func (rs *Stream) Serve(rel <-chan struct{}) {
	select {
	case <-rel:
	case <-rs.sessionDone:
		rs.mu.Lock()
		rs.detachLocked()
		rs.mu.Unlock()
	case <-rs.base.Done():
		rs.mu.Lock()
		rs.detachLocked()
		rs.mu.Unlock()
	}
}

// Event stores msg with the next id and sends it on the current connection,
// if any. It never fails: a client without a connection may come back.
func (rs *Stream) Event(msg []byte) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.seq++
	frame := make([]byte, 0, len(msg)+48)
	frame = append(frame, "id: "...)
	frame = append(frame, rs.eventID(rs.seq)...)
	frame = append(frame, "\nevent: message\ndata: "...)
	frame = append(frame, msg...)
	frame = append(frame, "\n\n"...)
	rs.events = append(rs.events, storedEvent{seq: rs.seq, frame: frame})
	rs.size += len(frame)
	for rs.size > maxReplayBytes && len(rs.events) > 1 {
		rs.size -= len(rs.events[0].frame)
		rs.events = rs.events[1:]
	}
	if rs.conn != nil && rs.conn.raw(frame) != nil {
		rs.detachLocked()
	}
	return nil
}

// Comment writes a keep-alive comment on the current connection, if any.
// It never fails.
func (rs *Stream) Comment() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.conn != nil && rs.conn.Comment() != nil {
		rs.detachLocked()
	}
	return nil
}

// Failed is always nil: a resumable stream outlives its connections.
func (rs *Stream) Failed() error { return nil }

// CloseConnection ends the current connection but not the stream (the
// server-initiated disconnect of SEP-1699 polling).
func (rs *Stream) CloseConnection() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.detachLocked()
}

// Finish sends the final message (nil: none, e.g. after a cancellation) and
// ends the stream.
func (rs *Stream) Finish(msg []byte) {
	if msg != nil {
		_ = rs.Event(msg)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.done, rs.finished = true, time.Now()
	rs.detachLocked()
}

// FinishBody sends a streamed result (prefix, what body writes, "}") on the
// current connection, not kept for replay, and ends the stream.
func (rs *Stream) FinishBody(prefix []byte, body func(io.Writer) error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.conn != nil {
		rs.seq++
		_ = rs.conn.raw([]byte("id: " + rs.eventID(rs.seq) + "\n"))
		_ = rs.conn.bodyEvent(prefix, body)
	}
	rs.done, rs.finished = true, time.Now()
	rs.detachLocked()
}
