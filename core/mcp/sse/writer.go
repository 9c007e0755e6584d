package sse

import (
	"io"
	"sync"
	"time"
)

// FlushWriter is the connection a [Writer] writes to: the transport's
// streamed response body.
type FlushWriter interface {
	io.Writer
	Flush() error
}

// Writer writes Server-Sent Events; each event is one Write followed by a Flush.
type Writer struct {
	mu     sync.Mutex
	w      FlushWriter
	err    error
	buf    []byte
	onFail func()
}

// NewWriter returns a Writer on w; onFail, when not nil, runs once when a
// write first fails (the client went away).
func NewWriter(w FlushWriter, onFail func()) *Writer { return &Writer{w: w, onFail: onFail} }

// Failed returns the write error that ended the stream, if any.
func (s *Writer) Failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Writer) fail(err error) error {
	if s.err == nil {
		s.err = err
		if s.onFail != nil {
			s.onFail()
		}
	}
	return err
}

// write writes the parts and flushes them, under the lock.
func (s *Writer) write(parts ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(parts...)
}

func (s *Writer) writeLocked(parts ...[]byte) error {
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

// Event writes one "message" event carrying msg (one JSON-RPC message
// without newlines).
func (s *Writer) Event(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf[:0], "event: message\ndata: "...)
	s.buf = append(s.buf, msg...)
	s.buf = append(s.buf, "\n\n"...)
	err := s.writeLocked(s.buf)
	if cap(s.buf) > maxKeptBuf {
		s.buf = nil
	}
	return err
}

// maxKeptBuf bounds the event buffer a Writer keeps between events, so a
// long-lived stream that once sent a large message (a listen
// acknowledgement echoing 4 MiB of URIs) does not hold that much for its
// life.
const maxKeptBuf = 64 << 10

// bodyEvent writes a message, prefix then what body writes then "}", as
// one data line.
func (s *Writer) bodyEvent(prefix []byte, body func(io.Writer) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	head := append([]byte("event: message\ndata: "), prefix...)
	if _, err := s.w.Write(head); err != nil {
		return s.fail(err)
	}
	if err := body(s.w); err != nil {
		return s.fail(err)
	}
	return s.writeLocked([]byte("}\n\n"))
}

// raw writes pre-framed SSE bytes and flushes them.
func (s *Writer) raw(frame []byte) error { return s.write(frame) }

// Comment writes a keep-alive comment line; it also detects gone clients.
func (s *Writer) Comment() error { return s.write([]byte(": keep-alive\n\n")) }

// Finish sends a call's final message (nil: none).
func (s *Writer) Finish(msg []byte) {
	if msg != nil {
		_ = s.Event(msg)
	}
}

// FinishBody sends a call's final message whose result body writes, after
// prefix, as one data line (a streamed resources/read result).
func (s *Writer) FinishBody(prefix []byte, body func(io.Writer) error) {
	_ = s.bodyEvent(prefix, body)
}

// KeepAlive writes a comment to s every d until the returned function is
// called.
func KeepAlive(s interface{ Comment() error }, d time.Duration) func() {
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
				if s.Comment() != nil {
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
