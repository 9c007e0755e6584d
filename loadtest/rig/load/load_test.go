package load

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeMCP answers initialize with a session, resources/read of "good"
// with blob, of "bad" with other bytes, of "missing" with a JSON-RPC
// error, and records every request id and session header.
type fakeMCP struct {
	blob     []byte
	mu       sync.Mutex
	ids      map[string]int
	sessions map[string]int
}

func (f *fakeMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch req.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "s-1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`, req.ID)
		return
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
		return
	}
	f.mu.Lock()
	f.ids[string(req.ID)]++
	f.sessions[r.Header.Get("Mcp-Session-Id")]++
	f.mu.Unlock()
	blob := f.blob
	switch req.Params.URI {
	case "blob:///missing":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32002,"message":"not found"}}`, req.ID)
		return
	case "blob:///bad":
		blob = append([]byte{blob[0] ^ 1}, blob[1:]...)
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":%q,"blob":"%s"}]}}`,
		req.ID, req.Params.URI, base64.StdEncoding.EncodeToString(blob))
}

func startFake(t *testing.T, size int) (*fakeMCP, string) {
	f := &fakeMCP{blob: pattern(int64(size)), ids: map[string]int{}, sessions: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func TestIntegrityClassesEachAnswer(t *testing.T) {
	const size = 3 << 20 // far more than the kept 4 KiB: hashed while it streams past
	f, base := startFake(t, size)
	sum := sha256.Sum256(f.blob)
	want := hex.EncodeToString(sum[:])
	s, err := New(context.Background(), "integrity", Params{Base: base, PerBlob: 2, Blobs: []Blob{
		{Key: "good", Size: size, SHA256: want}, {Key: "bad", Size: size, SHA256: want}, {Key: "missing", Size: size, SHA256: want},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), s)
	wantErrors := map[string]int{"integrity: sha256 differs from the seeded blob": 2, "jsonrpc error -32002": 2}
	if rep.Requests() != 6 || rep.Failed != 4 || len(rep.Errors) != len(wantErrors) {
		t.Fatalf("requests %d, failed %d, errors %v; want 6, 4, %v", rep.Requests(), rep.Failed, rep.Errors, wantErrors)
	}
	for c, n := range wantErrors {
		if rep.Errors[c] != n {
			t.Errorf("errors[%q] = %d, want %d (all: %v)", c, rep.Errors[c], n, rep.Errors)
		}
	}
	if rep.OK() {
		t.Error("thresholds held with failed requests")
	}
	if rep.Metrics.BytesIn.Total < 2*size {
		t.Errorf("bytes in %d: the transport did not count whole bodies", rep.Metrics.BytesIn.Total)
	}
}

func TestCallsHaveFreshIDsOnTheSession(t *testing.T) {
	f, base := startFake(t, 4096)
	s, err := New(context.Background(), "mixed", Params{Base: base, Size: 4096, Rate: 200, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(context.Background(), s)
	if rep.Failed != 0 || rep.Requests() < 150 {
		t.Fatalf("run: %d requests, errors %v", rep.Requests(), rep.Errors)
	}
	for id, n := range f.ids {
		if n != 1 {
			t.Errorf("id %s sent %d times", id, n)
		}
	}
	if len(f.ids) != rep.Requests() || f.sessions["s-1"] != rep.Requests() {
		t.Errorf("%d distinct ids, %d requests on session s-1, of %d requests", len(f.ids), f.sessions["s-1"], rep.Requests())
	}
	reads := 0
	if k := rep.Kinds["resources/read"]; k != nil {
		reads = int(k.Requests)
	}
	if d := 2*reads - rep.Requests(); d < -rep.Requests()/20 || d > rep.Requests()/20 {
		t.Errorf("%d resources/read of %d requests: want half, within 5 %%", reads, rep.Requests())
	}
}
