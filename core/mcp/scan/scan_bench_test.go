package scan

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadMessageDataURI scans a tools/call whose 16 MiB data URI is
// decoded into a spool as it arrives (SetBytes counts decoded bytes).
func BenchmarkReadMessageDataURI(b *testing.B) {
	opts := Options{MaxBodyBytes: 4 << 20, MaxFileBytes: 1 << 30, SpoolDir: b.TempDir()}
	payload := make([]byte, 16<<20)
	r := rand.NewChaCha8([32]byte{})
	r.Read(payload)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"file":"data:application/octet-stream;base64,` +
		base64.StdEncoding.EncodeToString(payload) + `"}}}`)
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		m, err := Read(bytes.NewReader(body), opts, nil)
		if err != nil {
			b.Fatal(err)
		}
		if f := m.Files.Get("/params/arguments/file"); f == nil || f.Size != int64(len(payload)) {
			b.Fatalf("file %+v", f)
		}
		m.Files.Release()
	}
}
