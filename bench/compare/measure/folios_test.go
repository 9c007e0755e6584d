package measure

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFolioPagesFollowsWriteSize: a file written in 1 MiB writes sits in
// larger folios than one written in 4 KiB writes, where the kernel lets
// FolioPages look (root); elsewhere FolioPages says it cannot.
func TestFolioPagesFollowsWriteSize(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, piece int) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, piece)
		for n := 0; n < 8<<20; n += piece {
			if _, err := f.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	small, large := write("small", 4<<10), write("large", 1<<20)
	ps, errS := FolioPages(small)
	pl, errL := FolioPages(large)
	if (errS == nil) != (errL == nil) {
		t.Fatalf("FolioPages: %v on one file, %v on the other", errS, errL)
	}
	if errS != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("FolioPages as root: %v", errS)
		}
		return // not root: the error is the answer
	}
	if ps < 1 || pl < 1 {
		t.Fatalf("mean folio %.1f and %.1f pages, want ≥ 1", ps, pl)
	}
	if pl < ps {
		t.Errorf("1 MiB writes: %.1f pages per folio, 4 KiB writes: %.1f; want the larger writes in folios at least as large", pl, ps)
	}
	t.Logf("pages per folio: 4 KiB writes %.1f, 1 MiB writes %.1f", ps, pl)
}
