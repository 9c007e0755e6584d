package wire

import (
	"mime"
	"testing"
)

// MediaType reads a Content-Type as mime.ParseMediaType does, and the
// types of MCP answers without an allocation.
func TestMediaType(t *testing.T) {
	for _, ct := range []string{
		"text/event-stream", "application/json", " Application/JSON ", "TEXT/EVENT-STREAM",
		"application/json; charset=utf-8", "text/event-stream;charset=UTF-8", "application/json; a=1; a=2",
		"application/jſon", "application/jsonx", "text/html", "", ";", "application/json;", "bogus",
	} {
		want, _, _ := mime.ParseMediaType(ct)
		if got := MediaType(ct); got != want {
			t.Errorf("MediaType(%q) = %q, want %q (mime.ParseMediaType)", ct, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = MediaType("text/event-stream") }); n != 0 {
		t.Errorf("%.0f allocations for text/event-stream; want none", n)
	}
}

func FuzzMediaType(f *testing.F) {
	f.Add("application/json")
	f.Add(" text/Event-Stream ; x=y")
	f.Fuzz(func(t *testing.T, ct string) {
		want, _, _ := mime.ParseMediaType(ct)
		if got := MediaType(ct); got != want {
			t.Errorf("MediaType(%q) = %q, want %q (mime.ParseMediaType)", ct, got, want)
		}
	})
}
