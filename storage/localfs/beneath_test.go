//go:build unix

package localfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestSymlinkedFolderWithMatchingMetadata moves a committed object's folder
// out of the store and plants a symlink to it: the sidecar still matches
// the data file, yet neither Stat nor Open may follow the link.
func TestSymlinkedFolderWithMatchingMetadata(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := put(t, s, "d/obj", "payload"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "d/obj"); err != nil { // cached metadata too
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(filepath.Join(dir, "d"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "d/obj"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat through a symlinked folder = %v; want ErrNotFound", err)
	}
	if rc, _, err := s.Open(ctx, "d/obj", nil); !errors.Is(err, storage.ErrNotFound) {
		if err == nil {
			rc.Close()
		}
		t.Errorf("Open through a symlinked folder = %v; want ErrNotFound", err)
	}
}

// TestFIFOIsNotOpened: a FIFO planted under a key is not an object, and
// opening it must not block.
func TestFIFOIsNotOpened(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, _, err := s.Open(t.Context(), "fifo", nil); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open(fifo) = %v; want ErrNotFound", err)
	}
	if _, err := s.Stat(t.Context(), "fifo"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat(fifo) = %v; want ErrNotFound", err)
	}
}

// TestConformanceWithoutOpenat2 runs the suite on the os.Root fallback
// (kernels without openat2) and without the metadata cache.
func TestConformanceWithoutOpenat2(t *testing.T) {
	storagetest.Suite{
		New: func(t *testing.T) storage.Backend {
			s, err := Open(t.TempDir(), Options{MetaCacheSize: -1})
			if err != nil {
				t.Fatal(err)
			}
			if s.beneath != nil {
				s.beneath.close()
				s.beneath = nil
			}
			return s
		},
		LocalFiles: true,
	}.Run(t)
}
