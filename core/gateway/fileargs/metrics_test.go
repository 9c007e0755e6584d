package fileargs

import (
	"encoding/base64"
	"io"
	"strings"
	"sync"
	"testing"
)

// countMetrics records what a gate counts.
type countMetrics struct {
	mu       sync.Mutex
	refused  map[string]int
	files    int
	refBytes int64
}

func (m *countMetrics) FileRefused(surface string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refused == nil {
		m.refused = map[string]int{}
	}
	m.refused[surface]++
}

func (m *countMetrics) FileByReference(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files++
	m.refBytes += n
}

// uploadGate is a gate of a tools/call of "upload" whose file (maxSize
// 1 KiB; by reference when ref) holds size bytes.
func uploadGate(size int, ref bool, m Metrics) *Gate {
	spec := Spec{MaxSize: 1 << 10}
	if ref {
		spec.Delivery = DeliveryReference
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", size))) + `"}}}`
	return NewGate(strings.NewReader(body), "", func(string) map[string]Spec { return map[string]Spec{"file": spec} }, m)
}

// A refused file is counted once, at Stop, on the argument surface; a
// good one is not; a file stored for delivery by reference is counted with
// its bytes.
func TestGateMetrics(t *testing.T) {
	m := &countMetrics{}
	g := uploadGate(4<<10, false, m)
	if _, err := io.Copy(io.Discard, g); err == nil {
		t.Fatal("a 4 KiB file against maxSize 1 KiB passed")
	}
	g.Stop()
	g.Stop()
	if good := uploadGate(100, false, m); good != nil {
		if _, err := io.Copy(io.Discard, good); err != nil {
			t.Fatal(err)
		}
		good.Stop()
	}
	byRef := uploadGate(700, true, m)
	if !byRef.Deliver(&memStore{}, 16<<10) {
		t.Fatal("Deliver: false for a by-reference argument")
	}
	if _, err := io.Copy(io.Discard, byRef); err != nil {
		t.Fatal(err)
	}
	byRef.Stop()
	if m.refused[SurfaceArgument] != 1 || len(m.refused) != 1 || m.files != 1 || m.refBytes != 700 {
		t.Fatalf("counted refusals %v, %d files by reference of %d bytes; want argument 1, 1 file of 700 bytes",
			m.refused, m.files, m.refBytes)
	}
}
