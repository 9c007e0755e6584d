package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
)

// pair is one of our encodings with its encoding/base64 oracle.
type pair struct {
	name string
	ours *Encoding
	std  *base64.Encoding
}

const customAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/"

var pairs = []pair{
	{"std", StdEncoding, base64.StdEncoding},
	{"url", URLEncoding, base64.URLEncoding},
	{"rawstd", RawStdEncoding, base64.RawStdEncoding},
	{"rawurl", RawURLEncoding, base64.RawURLEncoding},
	{"std-strict", StdEncoding.Strict(), base64.StdEncoding.Strict()},
	{"rawurl-strict", RawURLEncoding.Strict(), base64.RawURLEncoding.Strict()},
	{"custom-dot", NewEncoding(customAlphabet).WithPadding('.'), base64.NewEncoding(customAlphabet).WithPadding('.')},
	{"custom-hi-pad", StdEncoding.WithPadding(0xA9), base64.StdEncoding.WithPadding(0xA9)},
}

// testSizes crosses every block width a kernel may use (16, 32, 48, 64
// bytes and their 3/4 multiples) plus a few large sizes.
var testSizes = []int{
	0, 1, 2, 3, 4, 5, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 32, 33, 35, 36, 37,
	45, 47, 48, 49, 50, 63, 64, 65, 95, 96, 97, 127, 128, 129, 143, 144, 145,
	191, 192, 193, 255, 256, 257, 383, 384, 385, 1023, 1024, 1025, 4096, 16<<10 + 1,
	64<<10 + 1, 200<<10 + 7,
}

// sizes returns testSizes, without the largest under the race detector
// or -short.
func sizes() []int {
	if !raceEnabled && !testing.Short() {
		return testSizes
	}
	var s []int
	for _, n := range testSizes {
		if n <= 1100 {
			s = append(s, n)
		}
	}
	return s
}

const canaryLen = 16
const canary = 0xA5

// withCanary returns a slice of length n whose backing array continues with
// canaryLen canary bytes, and a check for them.
func withCanary(n int) (dst []byte, check func(tb testing.TB)) {
	buf := make([]byte, n+canaryLen)
	for i := range buf {
		buf[i] = canary
	}
	dst = buf[:n:n]
	return dst, func(tb testing.TB) {
		tb.Helper()
		for i, c := range buf[n:] {
			if c != canary {
				tb.Fatalf("canary byte %d past len(dst)=%d overwritten: %#x", i, n, c)
			}
		}
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func diff(tb testing.TB, what string, got, want []byte) {
	tb.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-32)
	tb.Fatalf("%s: mismatch at byte %d (len got %d, want %d)\ngot:\n%swant:\n%s", what, i, len(got), len(want),
		hex.Dump(got[lo:min(len(got), i+32)]), hex.Dump(want[lo:min(len(want), i+32)]))
}

// checkEncode compares every encoding entry point with the stdlib.
func checkEncode(tb testing.TB, p pair, src []byte) {
	tb.Helper()
	want := p.std.EncodeToString(src)
	if n := p.ours.EncodedLen(len(src)); n != len(want) {
		tb.Fatalf("%s: EncodedLen(%d) = %d, want %d", p.name, len(src), n, len(want))
	}
	dst, check := withCanary(len(want))
	p.ours.Encode(dst, src)
	check(tb)
	diff(tb, p.name+" Encode", dst, []byte(want))
	if got := p.ours.EncodeToString(src); got != want {
		diff(tb, p.name+" EncodeToString", []byte(got), []byte(want))
	}
	got := p.ours.AppendEncode([]byte("prefix"), src)
	diff(tb, p.name+" AppendEncode", got, append([]byte("prefix"), want...))
}

// checkDecode compares every decoding entry point with the stdlib: bytes,
// count, error type and offset.
func checkDecode(tb testing.TB, p pair, src []byte) {
	tb.Helper()
	want := make([]byte, p.std.DecodedLen(len(src)))
	wn, werr := p.std.Decode(want, src)
	if n := p.ours.DecodedLen(len(src)); n != len(want) {
		tb.Fatalf("%s: DecodedLen(%d) = %d, want %d", p.name, len(src), n, len(want))
	}
	dst, check := withCanary(len(want))
	gn, gerr := p.ours.Decode(dst, src)
	check(tb)
	if gerr != werr || gn != wn {
		tb.Fatalf("%s: Decode(%q) = %d, %v; want %d, %v", p.name, clip(src), gn, gerr, wn, werr)
	}
	diff(tb, p.name+" Decode", dst[:gn], want[:wn])

	ws, werr2 := p.std.DecodeString(string(src))
	gs, gerr2 := p.ours.DecodeString(string(src))
	if gerr2 != werr2 {
		tb.Fatalf("%s: DecodeString error %v, want %v", p.name, gerr2, werr2)
	}
	diff(tb, p.name+" DecodeString", gs, ws)

	wa, werr3 := p.std.AppendDecode([]byte("pre"), src)
	ga, gerr3 := p.ours.AppendDecode([]byte("pre"), src)
	if gerr3 != werr3 {
		tb.Fatalf("%s: AppendDecode error %v, want %v", p.name, gerr3, werr3)
	}
	diff(tb, p.name+" AppendDecode", ga, wa)
}

func clip(b []byte) string {
	if len(b) > 80 {
		return fmt.Sprintf("%q…(%d bytes)", b[:80], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func TestEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, n := range sizes() {
				checkEncode(t, p, randBytes(r, n))
			}
		}
	})
}

func TestDecodeValid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, n := range sizes() {
				checkDecode(t, p, []byte(p.std.EncodeToString(randBytes(r, n))))
			}
		}
	})
}

// insertAt returns s with ins inserted before each index in at (ascending).
func insertAt(s []byte, ins string, at ...int) []byte {
	var out []byte
	prev := 0
	for _, i := range at {
		if i < prev || i > len(s) {
			continue
		}
		out = append(out, s[prev:i]...)
		out = append(out, ins...)
		prev = i
	}
	return append(out, s[prev:]...)
}

func TestDecodeNewlines(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, n := range sizes() {
				if n > 20000 || (raceEnabled || testing.Short()) && n > 1100 {
					continue
				}
				enc := []byte(p.std.EncodeToString(randBytes(r, n)))
				// MIME and PEM line lengths, and breaks at block edges.
				lines := []int{1, 3, 4, 5, 63, 64, 65, 76}
				if raceEnabled || testing.Short() {
					lines = []int{3, 64, 76}
				}
				for _, line := range lines {
					var at []int
					for i := line; i < len(enc); i += line {
						at = append(at, i)
					}
					checkDecode(t, p, insertAt(enc, "\r\n", at...))
					checkDecode(t, p, insertAt(enc, "\n", at...))
				}
				for _, at := range []int{0, 1, 2, 3, 16, 31, 32, 47, 48, 62, 63, 64, 65, 127, 128, len(enc) - 1, len(enc)} {
					checkDecode(t, p, insertAt(enc, "\n", at))
					checkDecode(t, p, insertAt(enc, "\r\r\n\n", at))
				}
				// Random sprinkling.
				b := enc
				for range 1 + len(enc)/16 {
					i := r.IntN(len(b) + 1)
					b = insertAt(b, []string{"\r", "\n", "\r\n"}[r.IntN(3)], i)
				}
				checkDecode(t, p, b)
			}
		}
	})
}

// TestDecodeCorrupt puts a bad byte, '=', or a newline-then-bad byte at
// every position of the first few blocks and near the end.
func TestDecodeCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	bad := []byte{0x80, 0xFF, 0xC3, '!', '=', '-', '+', '/', '_', '.', ' ', 0, '\t', 0xA9}
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			sizes := []int{3, 30, 48, 96, 192, 300}
			if raceEnabled || testing.Short() {
				sizes = []int{3, 49, 100}
			}
			for _, n := range sizes {
				enc := []byte(p.std.EncodeToString(randBytes(r, n)))
				for i := range enc {
					for _, c := range bad {
						b := bytes.Clone(enc)
						b[i] = c
						checkDecode(t, p, b)
					}
					checkDecode(t, p, insertAt(enc, "\n=", i))
					checkDecode(t, p, insertAt(enc, "=", i))
					checkDecode(t, p, insertAt(enc, "==", i))
				}
			}
		}
	})
}

func TestDecodeTrailing(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	tails := []string{"", "=", "==", "===", "A", "AA", "AAA", "AAAA", "\n", "=\n=", "==\n", "==A", "\nA", "x", "QQ==", "QUI="}
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, n := range []int{0, 1, 2, 3, 46, 47, 48, 49, 64, 65, 66, 100} {
				enc := []byte(p.std.EncodeToString(randBytes(r, n)))
				for cut := max(0, len(enc)-6); cut <= len(enc); cut++ {
					for _, tail := range tails {
						checkDecode(t, p, append(bytes.Clone(enc[:cut]), tail...))
					}
				}
			}
		}
	})
}

// TestDecodeShortDst covers AppendDecode's exact sizing (smaller than
// DecodedLen for padded input) and a dst that is exactly big enough.
func TestDecodeShortDst(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, n := range sizes() {
				src := randBytes(r, n)
				enc := []byte(p.std.EncodeToString(src))
				dst, check := withCanary(n)
				got, err := p.ours.Decode(dst, enc)
				check(t)
				if err != nil || got != n {
					t.Fatalf("%s: Decode into exact dst: %d, %v", p.name, got, err)
				}
				diff(t, p.name, dst, src)
			}
		}
	})
}
