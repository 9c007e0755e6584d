package tusb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

// memTus is a tus server of one upload in memory, enough for the client:
// POST creates, HEAD reports the offset, PATCH appends at the offset.
type memTus struct {
	mu      sync.Mutex
	data    []byte
	size    int64
	patches []int64 // each PATCH's length
}

func (m *memTus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.Header().Set("Tus-Resumable", "1.0.0")
	switch r.Method {
	case http.MethodPost:
		m.size, _ = strconv.ParseInt(r.Header.Get("Upload-Length"), 10, 64)
		w.Header().Set("Location", "/files/one")
		w.WriteHeader(http.StatusCreated)
	case http.MethodHead:
		w.Header().Set("Upload-Offset", strconv.Itoa(len(m.data)))
	case http.MethodPatch:
		if off, _ := strconv.Atoi(r.Header.Get("Upload-Offset")); off != len(m.data) {
			w.WriteHeader(http.StatusConflict)
			return
		}
		b, err := io.ReadAll(r.Body)
		m.data = append(m.data, b...) // what arrived stays, as a tus server without checksums keeps it
		if err != nil {
			return
		}
		m.patches = append(m.patches, int64(len(b)))
		w.Header().Set("Upload-Offset", strconv.Itoa(len(m.data)))
		w.WriteHeader(http.StatusNoContent)
	}
}

func testBody(n int) []byte {
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	return raw
}

// The client sends the upload in chunks on the chunk grid, and a resumed
// send's first PATCH only fills up to the next boundary.
func TestClientChunksOnTheGrid(t *testing.T) {
	m := &memTus{}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c := &client{hc: srv.Client(), base: srv.URL}
	raw := testBody(10_000)
	u, err := c.create(context.Background(), "/files/", int64(len(raw)), map[string]string{"key": "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.send(context.Background(), u, raw[:2500], 0, 1000); err != nil {
		t.Fatal(err)
	}
	n, err := c.send(context.Background(), u, raw, 2500, 1000)
	if err != nil || n != 7500 {
		t.Fatalf("send from 2500 = %d, %v; want 7500", n, err)
	}
	if !bytes.Equal(m.data, raw) {
		t.Fatal("the server holds other bytes than were sent")
	}
	want := []int64{1000, 1000, 500, 500, 1000, 1000, 1000, 1000, 1000, 1000, 1000}
	if fmt.Sprint(m.patches) != fmt.Sprint(want) {
		t.Fatalf("PATCH lengths %v, want %v", m.patches, want)
	}
	if len(c.patches) != 11 {
		t.Fatalf("%d PATCH times kept, want one per PATCH since create (11)", len(c.patches))
	}
}

// killReader hands out exactly left bytes, then kills once and fails.
func TestKillReader(t *testing.T) {
	var sent int64
	kills := 0
	k := &killReader{data: testBody(100), left: 37, sent: &sent, kill: func() { kills++ }}
	got, err := io.ReadAll(io.LimitReader(onlyRead{k}, 1000))
	if err != errKilled || len(got) != 37 || sent != 37 || kills != 1 {
		t.Fatalf("read %d bytes, sent %d, %d kills, %v; want 37, 37, 1, errKilled", len(got), sent, kills, err)
	}
	sent = 0
	whole := &killReader{data: testBody(100), left: -1, sent: &sent, kill: func() { kills++ }}
	got, err = io.ReadAll(onlyRead{whole})
	if err != nil || len(got) != 100 || sent != 100 || kills != 1 {
		t.Fatalf("whole: read %d bytes, sent %d, %d kills, %v", len(got), sent, kills, err)
	}
}

type onlyRead struct{ r io.Reader }

func (o onlyRead) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 16)]) }

// P11's bounds take the worst run, and the store's writes are SeaweedFS's
// on S3 and the server's on the local store.
func TestP11TargetBounds(t *testing.T) {
	p := plan{size: 64 << 20, chunk: 8 << 20}
	st := func(name string, written float64) *storeResult {
		s := &storeResult{name: name, ops: make([]op, 3), idle: map[string]int64{}}
		tus := []sample{{mbps: 100, growth: 10, srvWritten: written, s3Written: written}, {mbps: 100, growth: 70, srvWritten: 1, s3Written: 1}}
		s.samples = [][]sample{tus, {{mbps: 100}, {mbps: 100}}, {{mbps: 90}, {mbps: 90}}}
		return s
	}
	tg := p11Target(p, []*storeResult{st("local", 2.0), st("S3", 1.0)}, nil)
	var got []string
	for _, b := range tg.Bounds {
		got = append(got, fmt.Sprintf("%s=%v/%v", b.Label, b.Value, b.Met()))
	}
	want := []pair.Bound{{Value: 70}, {Value: 2}, {Value: 70}, {Value: 1}}
	for i, b := range tg.Bounds {
		if b.Value != want[i].Value {
			t.Fatalf("bounds %v, want values 70, 2, 70, 1", got)
		}
	}
	if tg.Met() || len(tg.Why) == 0 {
		t.Fatalf("P11 with RSS growth 70 MiB and 2.0× written: met=%v, %d why lines", tg.Met(), len(tg.Why))
	}
}

// P12 takes the worst run of each bound, and a slow first PATCH is named
// as the part to shorten.
func TestP12Target(t *testing.T) {
	p := plan{size: 1 << 30, chunk: 8 << 20}
	runs := []resume{
		{sent: 516 << 20, offset: 512 << 20, toHead: 12 * time.Millisecond, toAccept: 90 * time.Millisecond, firstSize: 8 << 20},
		{sent: 516 << 20, offset: 510 << 20, toHead: 13 * time.Millisecond, toAccept: 321 * time.Millisecond, firstSize: 8 << 20},
	}
	tg := p12Target(p, runs)
	if tg.Bounds[0].Value != 6 || tg.Bounds[1].Value != 321 {
		t.Fatalf("bounds %+v, want 6 MiB sent again and 321 ms", tg.Bounds)
	}
	if tg.Met() || len(tg.Why) != 1 || !strings.Contains(tg.Why[0], "first PATCH of 8.0 MiB") {
		t.Fatalf("321 ms to the first accepted PATCH must miss, naming the PATCH: met=%v why=%q", tg.Met(), tg.Why)
	}
	g := &Report{plan: p, targets: []*pair.Target{tg}}
	if out := g.Render("abc"); !strings.Contains(out, "| 2 | 541065216 | 534773760 | 6.00 MiB | 13 ms | 321 ms |") {
		t.Fatalf("the rendered section lacks run 2's row:\n%s", out)
	}
}

// On S3 the store's own one-part-at-a-time pace bounds tus: the why line
// names it, and says the target is out of reach when that pace is under
// 0.9× PUT; its table row has no server figures.
func TestFloorBoundsTus(t *testing.T) {
	p := plan{size: 64 << 20, chunk: 8 << 20}
	s3 := func(floor float64) *storeResult {
		ops := []op{{name: "mcpblob tus", tus: true, srv: &server{}}, {name: "mcpblob PUT /v1/blobs", srv: &server{}}, {name: "tusd", tus: true, srv: &server{}}, {name: floorName}}
		s := &storeResult{name: "S3", ops: ops, idle: map[string]int64{}}
		s.samples = [][]sample{{{mbps: 80}}, {{mbps: 120}}, {{mbps: 78}}, {{mbps: floor, s3Written: 1}}}
		return s
	}
	for _, c := range []struct {
		floor float64
		want  string
	}{
		{85, "at 85 MB/s (median; minio-go from memory, each part's CRC32C in a trailer as mcpblob sends it, no server of ours: the pace of a client that waits for each chunk's answer), 0.71× PUT's rate, below 0.9× PUT: no tus server"},
		{150, "at 150 MB/s (median; minio-go from memory, each part's CRC32C in a trailer as mcpblob sends it, no server of ours: the pace of a client that waits for each chunk's answer), 1.25× PUT's rate, so a tus server reaches 0.9× PUT on this store at 72 % of that pace; mcpblob's tus reached 53 % of it."},
	} {
		tg := p11Target(p, []*storeResult{s3(c.floor)}, nil)
		if len(tg.Why) == 0 || !strings.Contains(tg.Why[0], c.want) {
			t.Fatalf("floor %v MB/s: why %q, want it to contain %q", c.floor, tg.Why, c.want)
		}
		row := fmt.Sprintf("| S3 | %s | 1 | %.0f | – | – | – | 1.00× |  |", floorName, c.floor)
		if !strings.Contains(tg.Detail, row) {
			t.Fatalf("the detail lacks the floor's row %q:\n%s", row, tg.Detail)
		}
	}
}
