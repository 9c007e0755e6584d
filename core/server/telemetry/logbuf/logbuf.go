package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Writer buffers what is written to it (log lines, each one Write) and
// passes it to the underlying writer in batches. Safe for concurrent use.
type Writer struct {
	mu       sync.Mutex
	out      io.Writer
	buf      []byte
	limit    int
	interval time.Duration
	timer    *time.Timer // flushes interval after the first line buffered
	err      error       // the last write error, returned by Flush
}

// New returns a Writer that writes to out once limit bytes are buffered
// or interval after the first buffered line, whichever comes first.
func New(out io.Writer, limit int, interval time.Duration) *Writer {
	w := &Writer{out: out, limit: max(limit, 1), interval: interval}
	w.timer = time.AfterFunc(time.Hour, w.timerFlush)
	w.timer.Stop()
	return w
}

// Write buffers p; it writes out the buffered lines first when p would not
// fit, and p itself unbuffered when p alone exceeds the limit. The error
// is that of a write made during this call.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if len(w.buf)+len(p) > w.limit {
		err = w.flushLocked()
	}
	if len(p) > w.limit {
		if _, e := w.out.Write(p); e != nil {
			err = e
		}
		return len(p), err
	}
	if len(w.buf) == 0 { // the first line of a batch starts its interval
		w.timer.Reset(w.interval)
	}
	if w.buf == nil {
		w.buf = make([]byte, 0, w.limit)
	}
	w.buf = append(w.buf, p...)
	return len(p), err
}

// Flush writes out the buffered lines now; it returns the error of this
// write or of an earlier one that was not returned yet.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushLocked(); err != nil {
		return err
	}
	err := w.err
	w.err = nil
	return err
}

func (w *Writer) timerFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushLocked(); err != nil {
		w.err = err
	}
}

// flushLocked writes the buffer out and empties it; the buffer is emptied
// even when the write fails, so a broken stderr does not grow memory.
func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Handler wraps h, whose output goes through w, so that a record at warn
// level or above is written out at once, with the lines before it.
func Handler(h slog.Handler, w *Writer) slog.Handler { return &handler{h: h, w: w} }

type handler struct {
	h slog.Handler
	w *Writer
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	err := h.h.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{h: h.h.WithAttrs(as), w: h.w}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), w: h.w}
}
