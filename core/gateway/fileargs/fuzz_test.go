package fileargs

import (
	"slices"
	"testing"
)

// The walk sees the same tool, arguments and bytes whatever the chunking,
// and never panics, on any input.
func FuzzWalkChunking(f *testing.F) {
	f.Add([]byte(`{"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:text\/plain,a\u0062\\\""}}}`), uint8(3))
	f.Add([]byte(`{"params":{"name":"upload","arguments":{"file":"x","n":[{"file":"y"}]}},"id":[[[[]]]]}`), uint8(1))
	f.Fuzz(func(t *testing.T, msg []byte, size uint8) {
		walk := func(chunk int) (string, []string, string, int) {
			rec := &recordSink{}
			w := &walker{sink: rec, isFile: fileArgsOf("upload.file")}
			for i := 0; i < len(msg); i += chunk {
				if err := w.feed(msg[i:min(i+chunk, len(msg))]); err != nil {
					t.Fatal(err)
				}
			}
			return w.name, rec.args, rec.bytes.String(), rec.ended
		}
		n1, a1, b1, e1 := walk(len(msg) + 1)
		n2, a2, b2, e2 := walk(int(size%16) + 1)
		if n1 != n2 || !slices.Equal(a1, a2) || b1 != b2 || e1 != e2 {
			t.Fatalf("whole: %q %q %q %d; in chunks of %d: %q %q %q %d", n1, a1, b1, e1, size%16+1, n2, a2, b2, e2)
		}
	})
}
