package gw

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

func TestStoreCopyFindsTheOneFileOfTheSize(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gateway/cache/ab/cd.facts", 122)
	if _, err := storeCopy(dir, 4096); err == nil {
		t.Fatal("no file of the size: want an error, not a path")
	}
	write("gateway/cache/ab/cd", 4096)
	got, err := storeCopy(dir, 4096)
	if err != nil || got != filepath.Join(dir, "gateway/cache/ab/cd") {
		t.Fatalf("storeCopy = %q, %v; want the blob's file", got, err)
	}
	write("gateway/cache/ef/gh", 4096)
	if _, err := storeCopy(dir, 4096); err == nil {
		t.Fatal("two files of the size: want an error (which one was served is unknown)")
	}
}

func TestG2CacheMissSaysWhereTheTimeWent(t *testing.T) {
	res := &g2Result{size: 256 << 20,
		hit:      cacheSide{rate: []float64{1600, 1700, 1650}, first: []float64{2.1, 2.3, 2.2}, after: []float64{1630, 1730, 1680}, cpu: []float64{90, 100, 80}, resident: []float64{1, 0.97, 1}},
		nginx:    cacheSide{rate: []float64{2300, 2400, 2350}, first: []float64{0.5, 0.6, 0.4}, after: []float64{2310, 2410, 2360}, cpu: []float64{110, 100, 120}, resident: []float64{1, 1, 1}},
		nginxOwn: cacheSide{rate: []float64{4600, 4800, 4700}, folio: []float64{16, 16, 16}},
	}
	tg := &pair.Target{ID: "G2"}
	res.target(tg)
	if tg.Pairs[1].Met() {
		t.Fatal("hits at 0.7× nginx must miss ≥ 0.9×")
	}
	why := strings.Join(tg.Why, "\n")
	for _, want := range []string{"after 2.2 ms", "nginx's after 0.5 ms", "1680 MB/s from the store", "2360 MB/s from nginx", "90 ms of CPU", "nginx 110 ms", "at least 97 % (store)", "its own copy of the bytes (information): 4700 MB/s in folios of 16 pages", "÷ nginx on its own copy: 0.50×"} {
		if !strings.Contains(why, want) {
			t.Fatalf("the miss line lacks %q:\n%s", want, why)
		}
	}
	if !strings.Contains(tg.Detail, "stream cache hit: first byte (ms)") || !strings.Contains(tg.Detail, "copy cached before the run") {
		t.Fatalf("the table lacks the hit's split and the cache state:\n%s", tg.Detail)
	}
	none := &pair.Target{ID: "G2"}
	(&g2Result{size: 1 << 20, errs: []string{"stream cache, first download: boom"}}).target(none)
	if why := strings.Join(none.Why, "\n"); strings.Contains(why, "the hit's first byte came after") {
		t.Fatalf("no pair ran: the miss line must not quote medians of nothing:\n%s", why)
	}
}
