package localfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

func put(t *testing.T, s *Store, key, data string) error {
	t.Helper()
	w, err := s.Create(t.Context(), key, storage.CreateOptions{})
	if err != nil {
		return err
	}
	defer w.Abort(t.Context())
	if _, err := w.Write([]byte(data)); err != nil {
		return err
	}
	_, err = w.Commit(t.Context())
	return err
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s.Close()
}

// TestFileFolderConflict: a path cannot be an object and a folder of objects
// at once; the error names what is in the way (the suite's PathConflict test
// covers the rest).
func TestFileFolderConflict(t *testing.T) {
	s := newStore(t)
	defer s.Close()
	if err := put(t, s, "a", "a"); err != nil {
		t.Fatal(err)
	}
	var pe *storage.PathConflictError
	if err := put(t, s, "a/b", "b"); !errors.As(err, &pe) || pe.Conflict != "a" {
		t.Errorf(`put "a/b" over object "a": %v, want a PathConflictError naming "a"`, err)
	}
	if err := put(t, s, "x/y", "y"); err != nil {
		t.Fatal(err)
	}
	if err := put(t, s, "x", "x"); !errors.As(err, &pe) || pe.Conflict != "x/" {
		t.Errorf(`put "x" over folder "x/": %v, want a PathConflictError naming "x/"`, err)
	}
	for _, key := range []string{"a", "x/y"} {
		if _, err := s.Stat(t.Context(), key); err != nil {
			t.Errorf("Stat(%q): %v", key, err)
		}
	}
}

// TestConflictOnce: conflict returns an error it mapped already as it is,
// so keyConflict, given the error of place, does not wrap it a second time.
func TestConflictOnce(t *testing.T) {
	for _, errno := range []error{syscall.ENOTDIR, syscall.EEXIST, syscall.ENAMETOOLONG} {
		if once := conflict(errno); conflict(once) != once {
			t.Errorf("conflict(%v) maps %q again: %q", errno, once, conflict(once))
		}
	}
}

// TestLongSegment: a segment over 255 bytes is refused by the key rules,
// before the file system's ENAMETOOLONG (whose message names host paths).
func TestLongSegment(t *testing.T) {
	s := newStore(t)
	defer s.Close()
	key := "dir/" + strings.Repeat("n", 300)
	var ke *storage.KeyError
	if err := put(t, s, key, "x"); !errors.As(err, &ke) || strings.Contains(err.Error(), "name too long") {
		t.Errorf("put with a 300-byte segment: %v, want a KeyError", err)
	}
	if _, err := s.Stat(t.Context(), key); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("Stat with a 300-byte segment: %v, want ErrInvalidKey", err)
	}
	// The reason is for clients: no syscall error, no path.
	for _, err := range []error{s.Delete(t.Context(), key), func() error { _, err := s.Stat(t.Context(), key); return err }(),
		errNameTooLong(syscall.ENAMETOOLONG)} {
		why := storage.KeyReason(err)
		if why == "" || strings.Contains(why, "file name too long") || !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("%v: reason %q", err, why)
		}
	}
	if err := errNameTooLong(syscall.ENAMETOOLONG); !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Errorf("%v does not wrap its cause for the log", err)
	}
}

// TestForeignFiles: files that the store did not write are not objects.
func TestForeignFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"foreign.txt", "sub/foreign", "back\\slash"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := put(t, s, "mine", "m"); err != nil {
		t.Fatal(err)
	}
	page, err := s.List(t.Context(), "", "", 0)
	if err != nil || len(page.Items) != 1 || page.Items[0].Key != "mine" {
		t.Errorf("List = %+v, %v; want only mine", page, err)
	}
	if _, err := s.Stat(t.Context(), "foreign.txt"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat(foreign.txt): %v, want ErrNotFound", err)
	}
	if err := s.Delete(t.Context(), "foreign.txt"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete(foreign.txt): %v, want ErrNotFound", err)
	}
	// A data file whose version no record describes is not served either.
	if err := os.WriteFile(filepath.Join(dir, "mine"), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(t.Context(), "mine"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat of a rewritten data file: %v, want ErrNotFound", err)
	}
	// Committing over a foreign file adopts the name.
	if err := put(t, s, "foreign.txt", "now mine"); err != nil {
		t.Fatal(err)
	}
	if info, err := s.Stat(t.Context(), "foreign.txt"); err != nil || info.Size != 8 {
		t.Errorf("Stat after adopting = %+v, %v", info, err)
	}
}

// TestLayout checks the on-disk promise: the data file is the object's bytes
// at the key's path, and deleting prunes empty folders in both trees.
func TestLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := put(t, s, "x/y/z.txt", "hello"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "x", "y", "z.txt"))
	if err != nil || string(b) != "hello" {
		t.Fatalf("data file = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, metaDir, "x", "y", "z.txt")); err != nil {
		t.Fatalf("sidecar: %v", err)
	}
	if err := s.Delete(t.Context(), "x/y/z.txt"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x", filepath.Join(metaDir, "x")} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Delete: %v", p, err)
		}
	}
	for _, p := range []string{metaDir, tmpDir} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestSymlinks: symbolic links are not objects, and none can lead a key out
// of the folder.
func TestSymlinks(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := put(t, s, "real", "real"); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"abs":      filepath.Join(outside, "secret"),
		"escape":   "../" + filepath.Base(outside) + "/secret",
		"outdir":   outside,
		"internal": "real",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	for _, key := range []string{"abs", "escape", "outdir/secret", "internal"} {
		if rc, _, err := s.Open(ctx, key, nil); err == nil {
			rc.Close()
			t.Errorf("Open(%q) through a symlink succeeded", key)
		}
		if _, err := s.Stat(ctx, key); err == nil {
			t.Errorf("Stat(%q) through a symlink succeeded", key)
		}
	}
	page, err := s.List(ctx, "", "", 0)
	if err != nil || len(page.Items) != 1 || page.Items[0].Key != "real" {
		t.Errorf("List = %+v, %v; want only real", page, err)
	}
	// A write to a key below a symlinked folder must not land outside.
	if err := put(t, s, "outdir/new", "x"); err == nil {
		t.Error("put through a symlinked folder succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a write escaped the folder")
	}
}
