package cachewatch

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Every resources/updated notification is seen however the stream is cut
// into reads (whole lines in one read, lines across reads, CRLF ends); a
// line over MaxWatchedLine is not looked at.
func TestWatchUpdatesAnyReads(t *testing.T) {
	note := func(uri string) string {
		return `data: {"jsonrpc":"2.0","method":"` + MethodUpdated + `","params":{"uri":"` + uri + `"}}`
	}
	long := note("file:///long") + strings.Repeat(" ", MaxWatchedLine)
	stream := "event: message\n" + note("file:///a") + "\n\n" +
		"event: message\r\n" + note("file:///b") + "\r\n\r\n" +
		long + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" + note("file:///c") + "\n\n"
	want := "file:///a file:///b file:///c"
	for _, size := range []int{1, 2, 7, 64, 1000, len(stream)} {
		var got []string
		w := WatchUpdates(io.NopCloser(iotest.HalfReader(strings.NewReader(stream))), func(uri string) { got = append(got, uri) })
		buf := make([]byte, size)
		var out strings.Builder
		for {
			n, err := w.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if out.String() != stream {
			t.Fatalf("reads of %d: the stream changed", size)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("reads of %d: updated %q; want %q", size, got, want)
		}
	}
}

// A resources/read answer of a 4 KiB blob, as go-sdk sends it, watched
// (go test -bench WatchUpdates -benchmem).
func BenchmarkWatchUpdates(b *testing.B) {
	answer := "event: message\nid: 1_0\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///bench-4KiB","blob":"` +
		strings.Repeat("QUJD", 4096/3+1) + `"}]}}` + "\n\n"
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	for b.Loop() {
		w := WatchUpdates(io.NopCloser(strings.NewReader(answer)), func(string) {})
		for {
			if _, err := w.Read(buf); err != nil {
				break
			}
		}
	}
}
