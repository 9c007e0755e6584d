package mcp

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
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	maxReplayBytes   = 256 << 10
	replayGrace      = time.Minute
	maxStreamsKept   = 32
	retryHintMillis  = 1000
	minResumeVersion = Version20251125
)

type storedEvent struct {
	seq   int64
	frame []byte
}

// resumable is one resumable SSE stream of a session; it implements
// eventSink for the call that feeds it.
type resumable struct {
	sess *session
	id   int64

	mu       sync.Mutex
	seq      int64
	events   []storedEvent
	size     int
	conn     *sse
	release  chan struct{} // closed when the current connection must end
	done     bool
	finished time.Time
}

// resumable reports whether the session's SSE streams are resumable.
func (sess *session) resumable() bool { return sess.version >= minResumeVersion }

func (sess *session) newStream() *resumable {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.streams == nil {
		sess.streams = map[int64]*resumable{}
	}
	now := time.Now()
	for id, rs := range sess.streams {
		rs.mu.Lock()
		stale := rs.done && now.Sub(rs.finished) > replayGrace
		rs.mu.Unlock()
		if stale || (len(sess.streams) >= maxStreamsKept && rs.doneNow()) {
			delete(sess.streams, id)
		}
	}
	sess.nextStream++
	rs := &resumable{sess: sess, id: sess.nextStream}
	sess.streams[rs.id] = rs
	return rs
}

func (rs *resumable) doneNow() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.done
}

// lookupStream finds the stream a Last-Event-ID names and the sequence
// number after which to replay.
func (sess *session) lookupStream(lastEventID string) (*resumable, int64) {
	sid, seqStr, ok := strings.Cut(lastEventID, "-")
	if !ok {
		return nil, 0
	}
	id, err1 := strconv.ParseInt(sid, 10, 64)
	seq, err2 := strconv.ParseInt(seqStr, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, 0
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.streams[id], seq
}

func (rs *resumable) eventID(seq int64) string {
	return strconv.FormatInt(rs.id, 10) + "-" + strconv.FormatInt(seq, 10)
}

// attach makes conn the stream's connection: it ends the previous one,
// writes the priming event (first connection) or replays the events after
// seq (reconnection), and returns the channel that tells conn to end.
func (rs *resumable) attach(conn *sse, after int64, priming bool) chan struct{} {
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

func (rs *resumable) detachLocked() {
	if rs.release != nil {
		close(rs.release)
		rs.release = nil
	}
	rs.conn = nil
}

// serve blocks until the connection must end.
func (rs *resumable) serve(rel chan struct{}) {
	select {
	case <-rel:
	case <-rs.sess.done:
		rs.mu.Lock()
		rs.detachLocked()
		rs.mu.Unlock()
	case <-rs.sess.srv.baseCtx.Done():
		rs.mu.Lock()
		rs.detachLocked()
		rs.mu.Unlock()
	}
}

// event stores msg with the next id and sends it on the current connection,
// if any. It never fails: a client without a connection may come back.
func (rs *resumable) event(msg []byte) error {
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

func (rs *resumable) comment() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.conn != nil && rs.conn.comment() != nil {
		rs.detachLocked()
	}
	return nil
}

func (rs *resumable) failed() error { return nil }

// closeConnection ends the current connection but not the stream (the
// server-initiated disconnect of SEP-1699 polling).
func (rs *resumable) closeConnection() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.detachLocked()
}

// finish sends the final message (nil: none, e.g. after a cancellation) and
// ends the stream.
func (rs *resumable) finish(msg []byte) {
	if msg != nil {
		_ = rs.event(msg)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.done, rs.finished = true, time.Now()
	rs.detachLocked()
}

// finishBody sends a streamed result on the current connection (not kept
// for replay) and ends the stream.
func (rs *resumable) finishBody(prefix []byte, br *bodyResult) {
	defer br.close()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.conn != nil {
		rs.seq++
		_ = rs.conn.raw([]byte("id: " + rs.eventID(rs.seq) + "\n"))
		_ = rs.conn.bodyEvent(prefix, br)
	}
	rs.done, rs.finished = true, time.Now()
	rs.detachLocked()
}

// respondResumable answers a 2025-11-25 request with a resumable SSE stream.
func (s *Server) respondResumable(w ResponseWriter, c *Call, m *method) {
	rs := c.sess.newStream()
	setSSEHeaders(w)
	c.files.Keep() // the call outlives handlePost: runStream releases them
	var once sync.Once
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		rel := rs.attach(newSSE(sw), 0, true)
		once.Do(func() {
			go func() {
				ctx, cancel := context.WithCancel(s.baseCtx)
				defer cancel()
				s.runStream(c, m, rs, ctx, cancel)
			}()
		})
		rs.serve(rel)
		return nil
	})
}
