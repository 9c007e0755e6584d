package codec

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

var benchSizes = []struct {
	name string
	n    int
}{{"64B", 64}, {"4KiB", 4 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}

func benchData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	return b
}

// forEachTierBench runs f as a sub-benchmark per tier and size, named
// tier/size, with SetBytes(size of the raw data) and ReportAllocs.
func forEachTierBench(b *testing.B, f func(b *testing.B, n int)) {
	for _, tier := range testTiers() {
		b.Run(tier, func(b *testing.B) {
			defer selectTier(b, tier)()
			for _, s := range benchSizes {
				b.Run(s.name, func(b *testing.B) {
					b.SetBytes(int64(s.n))
					b.ReportAllocs()
					f(b, s.n)
				})
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	forEachTierBench(b, func(b *testing.B, n int) {
		src := benchData(n)
		dst := make([]byte, StdEncoding.EncodedLen(n))
		for b.Loop() {
			StdEncoding.Encode(dst, src)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	forEachTierBench(b, func(b *testing.B, n int) {
		src := []byte(StdEncoding.EncodeToString(benchData(n)))
		dst := make([]byte, n)
		for b.Loop() {
			if _, err := StdEncoding.Decode(dst, src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeMIME decodes input broken into 76-character lines.
func BenchmarkDecodeMIME(b *testing.B) {
	forEachTierBench(b, func(b *testing.B, n int) {
		enc := StdEncoding.EncodeToString(benchData(n))
		var sb strings.Builder
		for len(enc) > 76 {
			sb.WriteString(enc[:76])
			sb.WriteString("\r\n")
			enc = enc[76:]
		}
		sb.WriteString(enc)
		src := []byte(sb.String())
		dst := make([]byte, n)
		for b.Loop() {
			if _, err := StdEncoding.Decode(dst, src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStreamEncode(b *testing.B) {
	forEachTierBench(b, func(b *testing.B, n int) {
		src := benchData(n)
		w := NewEncoder(StdEncoding, io.Discard)
		for b.Loop() {
			w.Write(src)
		}
	})
}

func BenchmarkStreamDecode(b *testing.B) {
	forEachTierBench(b, func(b *testing.B, n int) {
		src := []byte(StdEncoding.EncodeToString(benchData(n - n%3)))
		r := NewDecoder(StdEncoding, &cycleReader{b: src})
		p := make([]byte, min(n, 32<<10))
		for b.Loop() {
			for done := 0; done < n; done += len(p) {
				io.ReadFull(r, p)
			}
		}
	})
}

func BenchmarkParseDataURI(b *testing.B) {
	for _, s := range benchSizes {
		uri := FormatDataURI("image/png", benchData(s.n))
		b.Run(fmt.Sprint(s.name), func(b *testing.B) {
			b.SetBytes(int64(s.n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseDataURI(uri); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
