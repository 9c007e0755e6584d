package contents

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkWriteBase64 encodes a body to io.Discard, so it measures what
// the server spends besides the socket: "file" is a local file (mapped
// windows from mapMinBody, 2 MiB, up; read into a buffer below), "reader"
// any other reader (read into a pooled buffer). The file is in the page
// cache after the first round.
func BenchmarkWriteBase64(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"64KiB", 64 << 10}, {"1MiB", 1 << 20}, {"2MiB", 2 << 20}, {"4MiB", 4 << 20}, {"64MiB", 64 << 20}} {
		f, data := randomFile(b, 0, size.n)
		b.Run("file/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				if err := writeBase64(io.Discard, f, int64(size.n)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("reader/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for b.Loop() {
				if err := writeBase64(io.Discard, struct{ io.Reader }{bytes.NewReader(data)}, int64(size.n)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("fileread/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				if err := writeBase64(io.Discard, struct{ io.Reader }{f}, int64(size.n)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
