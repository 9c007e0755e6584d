package logbuf

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// TextHandler returns a handler that writes what slog.NewTextHandler(w,
// opts) writes, byte for byte. The records the server writes most (the
// access line: a message and string, integer and duration values of plain
// characters) are formatted straight into one buffer and written as one
// line; any other record, and every handler derived with WithAttrs or
// WithGroup, is formatted by slog's own text handler. Options that change
// the format (ReplaceAttr, AddSource) leave slog's handler alone in charge.
func TextHandler(w *Writer, opts *slog.HandlerOptions) slog.Handler {
	slow := slog.NewTextHandler(w, opts)
	if opts != nil && (opts.ReplaceAttr != nil || opts.AddSource) {
		return slow
	}
	return &textHandler{slow: slow, w: w}
}

type textHandler struct {
	slow *slog.TextHandler
	w    *Writer
}

// lineBufs are the line buffers of the fast path.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (h *textHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.slow.Enabled(ctx, l) }

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler { return h.slow.WithAttrs(as) }

func (h *textHandler) WithGroup(name string) slog.Handler { return h.slow.WithGroup(name) }

func (h *textHandler) Handle(ctx context.Context, r slog.Record) error {
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	line, ok := appendPlainRecord((*bp)[:0], r)
	*bp = line[:0]
	if !ok {
		return h.slow.Handle(ctx, r)
	}
	_, err := h.w.Write(line)
	return err
}

// appendPlainRecord appends r as the text handler formats it, and reports
// whether it could: false when r has no time, or holds a key or value this
// formatter does not take (see plainText, plainValue).
func appendPlainRecord(b []byte, r slog.Record) ([]byte, bool) {
	if r.Time.IsZero() || !plainText(r.Message) {
		return b, false
	}
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, r.Time.Round(0))
	b = append(b, " level="...)
	b = append(b, r.Level.String()...)
	b = append(b, " msg="...)
	b = append(b, r.Message...)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		if !plainText(a.Key) {
			ok = false
			return false
		}
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
		b, ok = appendPlainValue(b, a.Value)
		return ok
	})
	return append(b, '\n'), ok
}

// appendPlainValue appends v as the text handler does, for the kinds it
// takes: strings of plain text or empty (quoted), integers, booleans and
// durations.
func appendPlainValue(b []byte, v slog.Value) ([]byte, bool) {
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if s == "" {
			return append(b, `""`...), true
		}
		if !plainText(s) {
			return b, false
		}
		return append(b, s...), true
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		return append(b, v.Duration().String()...), true
	}
	return b, false
}

// plainText reports whether s is non-empty printable ASCII without space,
// '=', '"' or '\\': text slog's text handler writes unquoted, as it is.
func plainText(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendRFC3339Millis is slog's time format: RFC 3339 with exactly three
// digits of milliseconds (RFC3339Nano trims trailing zeros, so a tenth of
// a millisecond is added and the fourth digit dropped).
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}
