package mcp

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadMessageDataURI scans a tools/call whose 16 MiB data URI is
// decoded into a spool as it arrives (SetBytes counts decoded bytes).
func BenchmarkReadMessageDataURI(b *testing.B) {
	s, err := NewServer(Options{Backend: nopBackend{}, SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 16<<20)
	r := rand.NewChaCha8([32]byte{})
	r.Read(payload)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"file":"data:application/octet-stream;base64,` +
		base64.StdEncoding.EncodeToString(payload) + `"}}}`)
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		_, files, err := s.readMessage(bytes.NewReader(body), nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		files.release()
	}
}
