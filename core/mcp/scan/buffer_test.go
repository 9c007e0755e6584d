package scan

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestScanBufferGrows: the scanner holds its small buffer while a body
// trickles in and takes the large one once a read fills the small one.
func TestScanBufferGrows(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat("x", 200<<10) + `"}}`
	for _, tc := range []struct {
		name  string
		r     io.Reader
		large bool
	}{
		{"fast", strings.NewReader(body), true},
		{"trickle", iotest.OneByteReader(strings.NewReader(body)), false},
	} {
		b := newByteScanner(tc.r)
		var got bytes.Buffer
		for b.fill() {
			got.Write(b.buf[b.lo:b.hi])
			b.lo = b.hi
		}
		if got.String() != body {
			t.Fatalf("%s: read %d bytes, want %d", tc.name, got.Len(), len(body))
		}
		if (b.large != nil) != tc.large || (!tc.large && len(b.buf) != scanSmall) {
			t.Errorf("%s: large buffer taken = %v", tc.name, b.large != nil)
		}
		b.release()
	}
}
