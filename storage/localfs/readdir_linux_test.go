package localfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestReadDirEntries compares the getdents64 reader with os.ReadDir on a
// folder of files, folders, a symbolic link and a FIFO, with more entries
// than one read returns.
func TestReadDirEntries(t *testing.T) {
	dir := t.TempDir()
	var want []entry
	for i := range 3000 {
		name := fmt.Sprintf("%s-%04d", strings.Repeat("n", i%200), i)
		if i%10 == 0 {
			if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		want = append(want, entry{name: name, dir: i%10 == 0})
	}
	if err := os.Symlink("n-0001", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := root.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := readDirEntries(f)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, compareEntries)
	slices.SortFunc(want, compareEntries)
	if !slices.Equal(got, want) {
		t.Errorf("readDirEntries: %d entries, want %d (first %+v, want %+v)", len(got), len(want), got[:3], want[:3])
	}
}

// TestStatUnknown: names whose type getdents64 did not report are stated.
func TestStatUnknown(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o700)
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o600)
	os.Symlink("f", filepath.Join(dir, "l"))
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, _ := f.SyscallConn()
	got, err := statUnknown(rc, nil, []string{"d", "f", "l", "gone"})
	if want := []entry{{name: "d", dir: true}, {name: "f"}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("statUnknown = %+v, %v; want %+v", got, err, want)
	}
}

// FuzzAppendDirents: a getdents64 buffer of any content is parsed without
// a panic, and every name it gives is a non-empty path segment.
func FuzzAppendDirents(f *testing.F) {
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x18\x00\x08abc\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, unknown := appendDirents(nil, nil, b)
		for _, e := range out {
			if e.name == "" || strings.ContainsRune(e.name, 0) || len(e.name) >= len(b) {
				t.Errorf("name %q from a %d-byte buffer", e.name, len(b))
			}
		}
		if len(out)+len(unknown) > len(b)/(direntNameOffset+1) {
			t.Errorf("%d entries from %d bytes", len(out)+len(unknown), len(b))
		}
	})
}
