package logbuf

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"
)

// accessRecord is a record of the access line's shape.
func accessRecord(t time.Time, id, principal string, d time.Duration) slog.Record {
	r := slog.NewRecord(t, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("request_id", id), slog.String("route", "mcp"), slog.String("method", "POST"),
		slog.Int("status", 200), slog.Int64("bytes_out", 5593), slog.Int64("bytes_in", 92),
		slog.Duration("duration", d), slog.String("principal", principal),
		slog.String("mcp_method", "resources/read"), slog.String("tool", ""))
	return r
}

// render formats r with h over a fresh Writer and returns the line.
func render(t *testing.T, mk func(*Writer) slog.Handler, r slog.Record) string {
	t.Helper()
	var out bytes.Buffer
	w := New(&out, 1<<20, time.Hour)
	if err := mk(w).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func slowText(w *Writer) slog.Handler { return slog.NewTextHandler(w, nil) }
func fastText(w *Writer) slog.Handler { return TextHandler(w, nil) }

// TestTextHandlerMatchesSlog: every record, taken by the fast path or
// not, is written as slog's text handler writes it; the access line and
// records of random values and times are compared byte for byte.
func TestTextHandlerMatchesSlog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"", "a", "mcp", "tools/call", "x y", "a=b", `q"q`, `back\slash`, "tab\t", "nl\n", "é", "\x7f", "\x00",
		"mcpb_abc", "ü-ber", "~", "1.5", "\xff", "-", "a\u00a0b", "2026-11-27T20:06:25.018Z"}
	base := time.Date(2026, 11, 27, 20, 6, 25, 0, time.UTC)
	for i := range 3000 {
		tm := base.Add(time.Duration(rng.Int64N(int64(48 * time.Hour))))
		if i%7 == 0 {
			tm = tm.Truncate(time.Second) // trailing zero milliseconds
		}
		if i%11 == 0 {
			tm = tm.In(time.FixedZone("X", 5*3600+1800))
		}
		r := accessRecord(tm, pieces[rng.IntN(len(pieces))]+"-w1", pieces[rng.IntN(len(pieces))], time.Duration(rng.Int64N(int64(3*time.Second))))
		switch i % 5 {
		case 1:
			r.AddAttrs(slog.Bool("ok", i%2 == 0), slog.Uint64("n", rng.Uint64()))
		case 2:
			r.AddAttrs(slog.Any("err", errors.New("boom")), slog.Float64("f", 1.5))
		case 3:
			r.AddAttrs(slog.Group("g", slog.String("k", "v")), slog.String(pieces[rng.IntN(len(pieces))], "v"))
		case 4:
			r.Message = pieces[rng.IntN(len(pieces))]
			r.Level = slog.Level(rng.IntN(20) - 8)
		}
		if got, want := render(t, fastText, r), render(t, slowText, r); got != want {
			t.Fatalf("record %d:\n got %q\nwant %q", i, got, want)
		}
	}
	zero := accessRecord(time.Time{}, "id", "", time.Millisecond)
	if got, want := render(t, fastText, zero), render(t, slowText, zero); got != want {
		t.Fatalf("zero time:\n got %q\nwant %q", got, want)
	}
}

// TestTextHandlerTakesTheAccessLine: the access line goes the fast path
// (one write of the whole line), and derived handlers still format their
// attributes and groups as slog does.
func TestTextHandlerTakesTheAccessLine(t *testing.T) {
	if _, ok := appendPlainRecord(nil, accessRecord(time.Now(), "266df0c965b5-w86", "", 93*time.Microsecond)); !ok {
		t.Fatal("the access line is not taken by the fast path")
	}
	with := func(mk func(*Writer) slog.Handler) func(*Writer) slog.Handler {
		return func(w *Writer) slog.Handler {
			return mk(w).WithAttrs([]slog.Attr{slog.String("node", "a b")}).WithGroup("g")
		}
	}
	r := accessRecord(time.Now(), "id", "p", time.Second)
	if got, want := render(t, with(fastText), r), render(t, with(slowText), r); got != want {
		t.Fatalf("derived handler:\n got %q\nwant %q", got, want)
	}
	replace := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }}
	if _, fast := TextHandler(New(io.Discard, 1, time.Hour), replace).(*textHandler); fast {
		t.Fatal("ReplaceAttr is not honoured by the fast path, yet it was chosen")
	}
}

// BenchmarkAccessLine formats the access line with slog's text handler and
// with TextHandler, each behind a Writer over io.Discard.
func BenchmarkAccessLine(b *testing.B) {
	for _, c := range []struct {
		name string
		mk   func(*Writer) slog.Handler
	}{{"slog", slowText}, {"fast", fastText}} {
		b.Run(c.name, func(b *testing.B) {
			h := c.mk(New(io.Discard, 64<<10, time.Hour))
			r := accessRecord(time.Now(), "266df0c965b5-w86", "", 93*time.Microsecond)
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(context.Background(), r)
			}
		})
	}
}
