package localfs

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mcpblob/mcpblob/storage"
)

// TestUploadLeavesPageCache writes 96 MiB and checks, with mincore, that
// the committed file is mostly not resident: the writer dropped its
// written-back chunks instead of leaving the whole upload in memory.
func TestUploadLeavesPageCache(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 96 MiB")
	}
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const size = 96 << 20
	w, err := s.Create(t.Context(), "big", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 31)
	}
	for range size / len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (size+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	got := int64(resident) * int64(page)
	t.Logf("resident after commit: %d MiB of %d MiB", got>>20, size>>20)
	if limit := int64(4 * writebackChunk); got > limit {
		t.Errorf("%d MiB of the upload still in the page cache, want ≤ %d MiB", got>>20, limit>>20)
	}
}
