package mcp

import (
	"net/http"
	"sync"
	"time"
)

// eventSink carries a call's SSE messages: a connection (*sse) or a
// resumable stream (*resumable).
type eventSink interface {
	event(msg []byte) error
	comment() error
	failed() error
	// finish sends the call's final message (nil: none) and ends the
	// stream; finishBody sends a streamed result instead.
	finish(msg []byte)
	finishBody(prefix []byte, br *bodyResult)
}

func setSSEHeaders(w ResponseWriter) {
	w.SetStatus(http.StatusOK)
	w.SetHeader("Content-Type", "text/event-stream")
	w.SetHeader("Cache-Control", "no-cache")
	w.SetHeader("X-Accel-Buffering", "no")
}

// sse writes Server-Sent Events; each event is one Write followed by a Flush.
type sse struct {
	mu     sync.Mutex
	w      StreamWriter
	err    error
	buf    []byte
	onFail func()
}

func newSSE(w StreamWriter) *sse { return &sse{w: w} }

// failed returns the write error that ended the stream, if any.
func (s *sse) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sse) fail(err error) error {
	if s.err == nil {
		s.err = err
		if s.onFail != nil {
			s.onFail()
		}
	}
	return err
}

// write writes the parts and flushes them, under the lock.
func (s *sse) write(parts ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(parts...)
}

func (s *sse) writeLocked(parts ...[]byte) error {
	if s.err != nil {
		return s.err
	}
	for _, p := range parts {
		if _, err := s.w.Write(p); err != nil {
			return s.fail(err)
		}
	}
	if err := s.w.Flush(); err != nil {
		return s.fail(err)
	}
	return nil
}

// event writes one "message" event carrying msg (one JSON-RPC message
// without newlines).
func (s *sse) event(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf[:0], "event: message\ndata: "...)
	s.buf = append(s.buf, msg...)
	s.buf = append(s.buf, "\n\n"...)
	return s.writeLocked(s.buf)
}

// bodyEvent writes a message whose result streams from br as one data line.
func (s *sse) bodyEvent(prefix []byte, br *bodyResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	head := append([]byte("event: message\ndata: "), prefix...)
	if _, err := s.w.Write(head); err != nil {
		return s.fail(err)
	}
	if err := br.writeTo(s.w); err != nil {
		return s.fail(err)
	}
	return s.writeLocked([]byte("}\n\n"))
}

// raw writes pre-framed SSE bytes and flushes them.
func (s *sse) raw(frame []byte) error { return s.write(frame) }

// comment writes a keep-alive comment line; it also detects gone clients.
func (s *sse) comment() error { return s.write([]byte(": keep-alive\n\n")) }

func (s *sse) finish(msg []byte) {
	if msg != nil {
		_ = s.event(msg)
	}
}

func (s *sse) finishBody(prefix []byte, br *bodyResult) {
	defer br.close()
	_ = s.bodyEvent(prefix, br)
}

// keepAlive writes a comment to s every d until the returned function is
// called.
func keepAlive(s eventSink, d time.Duration) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if s.comment() != nil {
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
