package blobdecode

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// streamAnswer writes to w a resources/read answer (id 1) whose blob is
// the base64 of size pseudo-random bytes, framed as JSON or as SSE after a
// few notifications, with its blob in lines wrapped by "\n" escapes when
// wrap; it returns the blob's sha256.
func streamAnswer(w io.Writer, size int64, sse, wrap bool) ([sha256.Size]byte, error) {
	h := sha256.New()
	if sse {
		note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":0}}`
		if _, err := io.WriteString(w, sseEvent(note)+sseEvent(note)+"event: message\ndata: "); err != nil {
			return [32]byte{}, err
		}
	}
	head := `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///big.bin","mimeType":"application/octet-stream","blob":"`
	if _, err := io.WriteString(w, head); err != nil {
		return [32]byte{}, err
	}
	var dst io.Writer = w
	if wrap {
		dst = &lineWrapper{w: w}
	}
	enc := base64.NewEncoder(base64.StdEncoding, dst)
	if _, err := io.CopyN(io.MultiWriter(enc, h), rand.NewChaCha8([32]byte{7}), size); err != nil {
		return [32]byte{}, err
	}
	if err := enc.Close(); err != nil {
		return [32]byte{}, err
	}
	tail := `"}]}}`
	if sse {
		tail += "\n\n"
	}
	_, err := io.WriteString(w, tail)
	return [sha256.Size]byte(h.Sum(nil)), err
}

// streamToolResult writes to w a tools/call result (id 1) holding one
// image of size pseudo-random bytes, and returns their sha256.
func streamToolResult(w io.Writer, size int64) ([sha256.Size]byte, error) {
	h := sha256.New()
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","mimeType":"image/png","data":"`); err != nil {
		return [32]byte{}, err
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if _, err := io.CopyN(io.MultiWriter(enc, h), rand.NewChaCha8([32]byte{9}), size); err != nil {
		return [32]byte{}, err
	}
	if err := enc.Close(); err != nil {
		return [32]byte{}, err
	}
	_, err := io.WriteString(w, `"}]}}`)
	return [sha256.Size]byte(h.Sum(nil)), err
}

// startHeapMonitor samples the heap's peak growth (storagetest's).
func startHeapMonitor() *storagetest.HeapMonitor { return storagetest.StartHeapMonitor() }

// lineWrapper writes a JSON "\n" escape after every 76 characters.
type lineWrapper struct {
	w   io.Writer
	col int
	buf bytes.Buffer
}

func (l *lineWrapper) Write(p []byte) (int, error) {
	l.buf.Reset()
	for _, c := range p {
		l.buf.WriteByte(c)
		if l.col++; l.col == 76 {
			l.buf.WriteString(`\n`)
			l.col = 0
		}
	}
	_, err := l.w.Write(l.buf.Bytes())
	return len(p), err
}

// TestDecodeMemoryFlat streams a 256 MiB blob (16 MiB under -race or -short)
// through an io.Pipe into Decode, as JSON and as SSE, and checks the bytes
// that come out (sha256) and that the heap grew by less than 2 MiB: the
// reader, SSE and codec buffers (about 300 KiB), not the blob (the
// encoder on the writing side included).
func TestDecodeMemoryFlat(t *testing.T) {
	size := int64(256 << 20) // the full leg proves 256 MiB flat
	if raceEnabled || testing.Short() {
		size = 16 << 20 // the race and purego legs (-short) look for races and codec tiers, not for size
	}
	const maxGrowth = 2 << 20
	for _, tc := range []struct {
		name      string
		sse, wrap bool
	}{{"json", false, false}, {"sse", true, false}, {"json-wrapped", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			sums := make(chan [sha256.Size]byte, 1)
			mon := startHeapMonitor()
			go func() {
				sum, err := streamAnswer(pw, size, tc.sse, tc.wrap)
				pw.CloseWithError(err)
				sums <- sum
			}()
			ctype := jsonType
			if tc.sse {
				ctype = sseType
			}
			h := sha256.New()
			res, err := Decode(pr, ctype, []byte("1"), h, Options{})
			growth := mon.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if res.Written != size || [sha256.Size]byte(h.Sum(nil)) != <-sums {
				t.Fatalf("wrote %d bytes, want %d, or the bytes differ", res.Written, size)
			}
			t.Logf("%d MiB: heap grew %.2f MiB", size>>20, float64(growth)/(1<<20))
			if growth > maxGrowth {
				t.Fatalf("heap grew %d bytes, over %d", growth, maxGrowth)
			}
		})
	}
}
