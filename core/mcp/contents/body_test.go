package contents

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// TestEscapeMatchesEncodingJSON: scan.AppendEscaped writes the inside of a
// JSON string that encoding/json reads back as the input, and
// scan.EscapedLen is its length.
func TestEscapeMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, r.IntN(300))
		for j := range b {
			b[j] = byte(r.IntN(128))
		}
		s := strings.ToValidUTF8(string(b)+"ü€😀", "")
		got := `"` + string(scan.AppendEscaped(nil, []byte(s))) + `"`
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != s {
			t.Fatalf("escape of %q = %s does not round-trip: %v", s, got, err)
		}
		if int64(len(got)-2) != scan.EscapedLen([]byte(s)) {
			t.Fatalf("EscapedLen mismatch for %q", s)
		}
	}
	// Escaping appends, and may cut a UTF-8 sequence anywhere.
	s := "a€\"b"
	out := []byte("x")
	for i := range len(s) {
		out = scan.AppendEscaped(out, []byte(s[i:i+1]))
	}
	if string(out) != `xa€\"b` {
		t.Fatalf("byte-wise escape = %q", out)
	}
}

func TestScanText(t *testing.T) {
	t.Parallel()
	// A multi-byte rune straddling the chunk boundary must not look invalid.
	s := strings.Repeat("a", textChunk-1) + "€" + strings.Repeat("\"", 10)
	if !utf8.ValidString(s) {
		t.Fatal("bad test input")
	}
	for _, split := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.HalfReader, iotest.OneByteReader} {
		ok, n, err := ScanText(split(strings.NewReader(s)), int64(len(s)))
		if err != nil || !ok || n != scan.EscapedLen([]byte(s)) {
			t.Fatalf("ScanText = %v, %d, %v", ok, n, err)
		}
	}
	for _, bad := range []string{"ok\xff", strings.Repeat("a", textChunk-1) + "\xe2\x82", "\xc3", strings.Repeat("a", textChunk) + "\xed\xa0\x80"} {
		if ok, _, _ := ScanText(strings.NewReader(bad), int64(len(bad))); ok {
			t.Errorf("ScanText accepted invalid UTF-8 %q", bad[len(bad)-2:])
		}
	}
	if _, _, err := ScanText(strings.NewReader("short"), 10); err != ErrShortBody {
		t.Errorf("short body: %v, want ErrShortBody", err)
	}
	// Only n bytes are read.
	if ok, n, err := ScanText(strings.NewReader("ab\xff"), 2); !ok || n != 2 || err != nil {
		t.Errorf("prefix: %v, %d, %v", ok, n, err)
	}
}

func TestWriteBase64(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 3, 4, maxOut/4*3 - 1, maxOut / 4 * 3, maxOut/4*3 + 1, 3*maxOut + 2} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		var out bytes.Buffer
		if err := writeBase64(&out, iotest.HalfReader(bytes.NewReader(src)), int64(n)); err != nil {
			t.Fatal(err)
		}
		if want := base64.StdEncoding.EncodeToString(src); out.String() != want {
			t.Fatalf("n=%d: base64 differs", n)
		}
	}
	if err := writeBase64(io.Discard, strings.NewReader("abc"), 4); err != ErrShortBody {
		t.Fatalf("short body: %v, want ErrShortBody", err)
	}
	// Text is escaped the same way, in chunks.
	s := strings.Repeat("é\"\n", textChunk)
	var out bytes.Buffer
	if err := writeEscaped(&out, iotest.HalfReader(strings.NewReader(s)), int64(len(s))); err != nil {
		t.Fatal(err)
	}
	if int64(out.Len()) != scan.EscapedLen([]byte(s)) || string(scan.AppendEscaped(nil, []byte(s))) != out.String() {
		t.Fatal("writeEscaped differs from AppendEscaped")
	}
}
