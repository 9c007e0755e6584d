//go:build !race

package codec

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"strings"
	"testing"
)

// The zero-allocation contracts of the hot paths. (The race detector
// allocates on its own, hence the build tag.)

func TestAllocs(t *testing.T) {
	src := make([]byte, 48<<10)
	for i := range src {
		src[i] = byte(i * 13)
	}
	encoded := []byte(StdEncoding.EncodeToString(src)) // no padding: 48 KiB is a multiple of 3
	forEachTier(t, func(t *testing.T) {
		check := func(name string, f func()) {
			t.Helper()
			f() // buffers allocated on first use are not per call
			if n := testing.AllocsPerRun(50, f); n != 0 {
				t.Errorf("%s: %v allocations per run, want 0", name, n)
			}
		}
		dst := make([]byte, len(encoded))
		check("Encode", func() { StdEncoding.Encode(dst, src) })
		check("Decode", func() { StdEncoding.Decode(dst, encoded) })

		enc := NewEncoder(StdEncoding, io.Discard)
		check("Encoder.Write", func() { enc.Write(src[:40000]) })
		br := bytes.NewReader(src)
		check("Encoder.ReadFrom", func() {
			br.Reset(src)
			enc.(io.ReaderFrom).ReadFrom(br)
		})

		dec := NewDecoder(StdEncoding, &cycleReader{b: encoded})
		p := make([]byte, 40000)
		check("Decoder.Read", func() { io.ReadFull(dec, p) })
		small := make([]byte, 2)
		check("Decoder.Read(2 bytes)", func() { dec.Read(small) })

		r, err := NewDataURIReader(io.MultiReader(strings.NewReader("data:image/png;base64,"), &cycleReader{b: encoded}))
		if err != nil {
			t.Fatal(err)
		}
		check("DataURIReader.Read", func() { io.ReadFull(r, p) })
		r, err = NewDataURIReader(io.MultiReader(strings.NewReader("data:text/plain,"), &cycleReader{b: []byte("a%20b")}))
		if err != nil {
			t.Fatal(err)
		}
		check("DataURIReader.Read (percent)", func() { io.ReadFull(r, p) })
	})
}

// genReader yields n pseudo-random bytes (xorshift64) without holding them,
// and checksums what it yields.
type genReader struct {
	n, state uint64
	crc      uint32
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(uint64(len(p)), g.n)&^7]
	if len(p) == 0 {
		return 0, io.ErrShortBuffer // n is a multiple of 8; callers read in big chunks
	}
	s := g.state
	for i := 0; i+8 <= len(p); i += 8 {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		binary.LittleEndian.PutUint64(p[i:], s)
	}
	g.state = s
	g.n -= uint64(len(p))
	g.crc = crc32.Update(g.crc, crc32.IEEETable, p)
	return len(p), nil
}

type crcWriter struct {
	crc uint32
	n   int64
}

func (w *crcWriter) Write(p []byte) (int, error) {
	w.crc = crc32.Update(w.crc, crc32.IEEETable, p)
	w.n += int64(len(p))
	return len(p), nil
}

// TestStreamMemory pushes 256 MiB through the streaming encoder and then
// the streaming decoder, generated on the fly, and checks that the codec
// allocated almost nothing while doing so.
func TestStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("256 MiB round trip")
	}
	const size = 256 << 20
	gen := &genReader{n: size, state: 0x9E3779B97F4A7C15}
	pr, pw := io.Pipe()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	done := make(chan error, 1)
	go func() {
		w := NewEncoder(StdEncoding, pw)
		_, err := io.Copy(w, gen)
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
		done <- err
	}()
	out := &crcWriter{}
	if _, err := io.Copy(out, NewDecoder(StdEncoding, pr)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if out.n != size || out.crc != gen.crc {
		t.Fatalf("round trip: %d bytes crc %08x, want %d bytes crc %08x", out.n, out.crc, size, gen.crc)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("tier %s: allocated %d KiB in total, heap in use grew %d KiB", Tier(), allocated>>10, grown>>10)
	if allocated > 8<<20 || grown > 8<<20 {
		t.Fatalf("allocated %d bytes, heap grew %d bytes; want < 8 MiB", allocated, grown)
	}
}
