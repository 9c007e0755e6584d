package wire

import "testing"

// A resources/read request as an SDK client sends it (go test -bench
// PeekMessage -benchmem).
func BenchmarkPeekMessage(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///bench-4KiB","_meta":{}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if m, _, _ := PeekMessage(body); m != "resources/read" {
			b.Fatal(m)
		}
	}
}
