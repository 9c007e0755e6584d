package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"
)

// chunkReader returns b in pieces of random size up to max, now and then an
// empty read, and io.EOF together with the last piece when eofWithData.
type chunkReader struct {
	b           []byte
	r           *rand.Rand
	max         int
	eofWithData bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	if c.r.IntN(16) == 0 {
		return 0, nil
	}
	n := min(1+c.r.IntN(c.max), len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	if len(c.b) == 0 && c.eofWithData {
		return n, io.EOF
	}
	return n, nil
}

// cycleReader yields b over and over.
type cycleReader struct {
	b   []byte
	off int
}

func (c *cycleReader) Read(p []byte) (int, error) {
	n := copy(p, c.b[c.off:])
	c.off = (c.off + n) % len(c.b)
	return n, nil
}

// readScratch is readSized's buffer; tests that use it do not run in parallel.
var readScratch []byte

// readSized reads r to the end with reads of random sizes from sizes.
func readSized(r io.Reader, rnd *rand.Rand, sizes []int) ([]byte, error) {
	var out []byte
	if len(readScratch) < slices.Max(sizes) {
		readScratch = make([]byte, slices.Max(sizes))
	}
	buf := readScratch
	for {
		n := sizes[rnd.IntN(len(sizes))]
		m, err := r.Read(buf[:n])
		out = append(out, buf[:m]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func stripNL(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return out
}

// streamOracle is what NewDecoder must produce: the stdlib's stream
// semantics with offsets counted from the start of the CR/LF-stripped
// stream (see NewDecoder).
func streamOracle(p pair, src []byte) ([]byte, error) {
	s := stripNL(src)
	if p.ours.padChar == NoPadding {
		out := make([]byte, p.std.DecodedLen(len(s)))
		n, err := p.std.Decode(out, s)
		return out[:n], err
	}
	aligned := len(s) / 4 * 4
	out := make([]byte, p.std.DecodedLen(aligned))
	n, err := p.std.Decode(out, s[:aligned])
	if err == nil && aligned < len(s) {
		err = io.ErrUnexpectedEOF
	}
	return out[:n], err
}

// checkStreamDecode decodes src with NewDecoder through a random reader and
// random read sizes, and compares with the oracle; for inputs that fit the
// stdlib decoder's first window it also compares with base64.NewDecoder.
func checkStreamDecode(tb testing.TB, p pair, src []byte, rnd *rand.Rand) {
	tb.Helper()
	want, werr := streamOracle(p, src)
	readers := []io.Reader{
		bytes.NewReader(src),
		iotest.OneByteReader(bytes.NewReader(src)),
		&chunkReader{b: src, r: rnd, max: 1 + rnd.IntN(200), eofWithData: rnd.IntN(2) == 0},
		&chunkReader{b: src, r: rnd, max: 1 + rnd.IntN(100000), eofWithData: true},
	}
	sizes := [][]int{{1}, {2}, {3}, {1, 2, 3, 4, 5, 700}, {64 << 10}, {1 << 20}}
	for i, r := range readers {
		got, gerr := readSized(NewDecoder(p.ours, r), rnd, sizes[rnd.IntN(len(sizes))])
		if gerr != werr {
			tb.Fatalf("%s reader %d: NewDecoder(%s) error %v, want %v", p.name, i, clip(src), gerr, werr)
		}
		diff(tb, p.name+" NewDecoder", got, want)
	}
	// WriteTo, which io.Copy uses.
	var buf bytes.Buffer
	_, gerr := io.Copy(&buf, NewDecoder(p.ours, &chunkReader{b: src, r: rnd, max: 5000}))
	if gerr != werr && !(werr == nil && gerr == nil) {
		tb.Fatalf("%s: io.Copy(NewDecoder) error %v, want %v", p.name, gerr, werr)
	}
	diff(tb, p.name+" WriteTo", buf.Bytes(), want)

	if len(src) > 1024 {
		return
	}
	// The stdlib's decoder, reading everything in its first window.
	sd, serr := readSized(base64.NewDecoder(p.std, bytes.NewReader(src)), rnd, []int{4096})
	diff(tb, p.name+" vs base64.NewDecoder", sd, want)
	var sc, wc base64.CorruptInputError
	switch {
	case errors.As(serr, &sc) && errors.As(werr, &wc):
		// The stdlib counts an unpadded encoding's final characters from
		// their own start.
		frag := int64(len(stripNL(src)) / 4 * 4)
		if sc != wc && !(p.ours.padChar == NoPadding && int64(wc) >= frag && sc+base64.CorruptInputError(frag) == wc) {
			tb.Fatalf("%s: base64.NewDecoder(%s) error %v, ours %v", p.name, clip(src), serr, werr)
		}
	case serr != werr:
		tb.Fatalf("%s: base64.NewDecoder(%s) error %v, ours %v", p.name, clip(src), serr, werr)
	}
}

func streamInputs(p pair, r *rand.Rand) [][]byte {
	var ins [][]byte
	for _, n := range []int{0, 1, 2, 3, 4, 47, 48, 49, 100, 700, 767, 768, 769, 5000, 70000, 300000} {
		if (raceEnabled || testing.Short()) && n > 5000 {
			continue
		}
		enc := []byte(p.std.EncodeToString(randBytes(r, n)))
		ins = append(ins, enc)
		var at []int
		for i := 76; i < len(enc); i += 76 {
			at = append(at, i)
		}
		ins = append(ins, insertAt(enc, "\r\n", at...))
		if len(enc) > 0 && n < 5000 {
			for range 4 {
				b := bytes.Clone(enc)
				b[r.IntN(len(b))] = []byte{'=', 0x80, '!', '\n'}[r.IntN(4)]
				ins = append(ins, b)
			}
			for cut := max(0, len(enc)-5); cut < len(enc); cut++ {
				ins = append(ins, enc[:cut])
			}
			ins = append(ins, append(bytes.Clone(enc), "QQ=="...), append(bytes.Clone(enc), "\n\nx"...))
		}
	}
	return ins
}

func TestStreamDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, in := range streamInputs(p, r) {
				checkStreamDecode(t, p, in, r)
			}
		}
	})
}

func TestStreamDecodeWindowArtefact(t *testing.T) {
	// Padding followed by more data: an error at the first byte after the
	// padding, wherever the reads split the input.
	for _, split := range []int{1, 4, 5, 8} {
		src := []byte("QQ==QUJD")
		r := io.MultiReader(bytes.NewReader(src[:split]), bytes.NewReader(src[split:]))
		got, err := io.ReadAll(NewDecoder(StdEncoding, r))
		if string(got) != "A" || err != base64.CorruptInputError(4) {
			t.Errorf("split %d: got %q, %v", split, got, err)
		}
	}
}

func TestStreamDecodeReadError(t *testing.T) {
	boom := errors.New("boom")
	src := []byte(StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 300)))
	for _, cut := range []int{0, 1, 4, 5, 100} {
		r := io.MultiReader(bytes.NewReader(src[:cut]), iotest.ErrReader(boom))
		got, err := io.ReadAll(NewDecoder(StdEncoding, r))
		if err != boom {
			t.Errorf("cut %d: error %v, want boom", cut, err)
		}
		if want := cut / 4 * 3; len(got) != want {
			t.Errorf("cut %d: %d bytes before the error, want %d", cut, len(got), want)
		}
	}
	// Empty reads forever.
	_, err := NewDecoder(StdEncoding, emptyReader{}).Read(make([]byte, 10))
	if err != io.ErrNoProgress {
		t.Errorf("empty reads: %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestStreamEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	forEachTier(t, func(t *testing.T) {
		for _, p := range pairs {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 47, 48, 49, 1000, 48 << 10, 48<<10 + 1, 200000} {
				src := randBytes(r, n)
				want := p.std.EncodeToString(src)
				// Writes of random sizes.
				var buf bytes.Buffer
				w := NewEncoder(p.ours, &buf)
				for rest := src; len(rest) > 0; {
					k := min(len(rest), []int{1, 2, 3, 4, 7, 100, 5000, 100000}[r.IntN(8)])
					if m, err := w.Write(rest[:k]); m != k || err != nil {
						t.Fatalf("Write: %d, %v", m, err)
					}
					rest = rest[k:]
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				diff(t, p.name+" NewEncoder", buf.Bytes(), []byte(want))
				// ReadFrom, through io.Copy from a reader without WriteTo.
				buf.Reset()
				w = NewEncoder(p.ours, &buf)
				if m, err := io.Copy(w, &chunkReader{b: src, r: r, max: 70000}); m != int64(n) || err != nil {
					t.Fatalf("io.Copy: %d, %v", m, err)
				}
				w.Close()
				diff(t, p.name+" ReadFrom", buf.Bytes(), []byte(want))
			}
		}
	})
}

type errWriter struct{ n int }

func (w *errWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errors.New("write failed")
	}
	w.n--
	return len(p), nil
}

func TestStreamEncodeWriteError(t *testing.T) {
	w := NewEncoder(StdEncoding, &errWriter{n: 1})
	src := make([]byte, 200<<10)
	if _, err := w.Write(src); err == nil {
		t.Fatal("Write: no error from a failing writer")
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after error: no error")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after error: no error")
	}
}
