package blobdecode

import (
	"bytes"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/mcpblob/mcpblob/core/codec"
)

var benchSizes = []struct {
	name string
	n    int64
}{{"64KiB", 64 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}}

// benchBody is an answer whose blob holds n pseudo-random bytes, as JSON
// or SSE (after two notifications), and the blob's base64 alone.
func benchBody(b *testing.B, n int64, sse bool) (body, blob []byte) {
	var buf bytes.Buffer
	if _, err := streamAnswer(&buf, n, sse, false); err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, n)
	_, _ = io.ReadFull(rand.NewChaCha8([32]byte{7}), raw)
	return buf.Bytes(), []byte(base64.StdEncoding.EncodeToString(raw))
}

// BenchmarkDecode runs Decode on an answer held in memory into
// io.Discard: the rate in decoded bytes per second, next to the codec's
// own streaming decoder on the blob alone (raw), which bounds it.
func BenchmarkDecode(b *testing.B) {
	for _, s := range benchSizes {
		jsonBody, blob := benchBody(b, s.n, false)
		sseBody, _ := benchBody(b, s.n, true)
		b.Run("raw/"+s.name, func(b *testing.B) {
			b.SetBytes(s.n)
			b.ReportAllocs()
			for b.Loop() {
				dec := codec.NewDecoder(codec.StdEncoding, bytes.NewReader(blob))
				if _, err := dec.(io.WriterTo).WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, f := range []struct {
			name  string
			body  []byte
			ctype string
		}{{"json", jsonBody, jsonType}, {"sse", sseBody, sseType}} {
			b.Run(f.name+"/"+s.name, func(b *testing.B) {
				b.SetBytes(s.n)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Decode(bytes.NewReader(f.body), f.ctype, []byte("1"), io.Discard, Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
