package storagetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
)

// testPathConflict: keys are paths on every backend. While an object "a"
// exists no "a/…" can be created, and while objects "x/…" exist no "x":
// Create or Commit fails with a *storage.PathConflictError naming what is
// in the way, and nothing changes.
func (s Suite) testPathConflict(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	a := put(t, b, "pc/a", []byte("a"), storage.CreateOptions{})
	y := put(t, b, "pc/x/y", []byte("y"), storage.CreateOptions{})
	for _, c := range []struct{ key, conflict string }{
		{"pc/a/b", "pc/a"},
		{"pc/a/b/c", "pc/a"},
		{"pc/x", "pc/x/"},
	} {
		w, err := b.Create(ctx, c.key, storage.CreateOptions{})
		if err == nil {
			if err = writeAll(w, []byte("z")); err == nil {
				_, err = w.Commit(ctx)
			}
			w.Abort(ctx)
		}
		var pe *storage.PathConflictError
		switch {
		case !errors.As(err, &pe):
			t.Errorf("writing %q: %v, want a *storage.PathConflictError", c.key, err)
		case !errors.Is(err, storage.ErrPathConflict) || errors.Is(err, storage.ErrExists):
			t.Errorf("writing %q: %v is not ErrPathConflict alone", c.key, err)
		case pe.Key != c.key || pe.Conflict != c.conflict:
			t.Errorf("writing %q: conflict %+v, want Conflict %q", c.key, *pe, c.conflict)
		}
		absent(t, b, c.key)
	}
	sameInfo(t, "Stat of the object in the way", mustStat(t, b, "pc/a"), a)
	sameInfo(t, "Stat of the object under the folder", mustStat(t, b, "pc/x/y"), y)
	// The conflict that appears between Create and Commit is caught too.
	w, err := b.Create(ctx, "pc/p/q", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort(ctx)
	p := put(t, b, "pc/p", []byte("p"), storage.CreateOptions{})
	if err := writeAll(w, []byte("q")); err == nil {
		_, err = w.Commit(ctx)
		wantErr(t, "Commit of pc/p/q after pc/p appeared", err, storage.ErrPathConflict)
	}
	absent(t, b, "pc/p/q")
	sameInfo(t, "Stat", mustStat(t, b, "pc/p"), p)
	// Siblings sharing a name prefix do not conflict.
	put(t, b, "pc/a.txt", []byte("s"), storage.CreateOptions{})
	put(t, b, "pc/xy", []byte("s"), storage.CreateOptions{})
}

// BadFilenames break the filename rules (storage.ValidateFilename).
var BadFilenames = []string{"a\r\nb.txt", "nul\x00.txt", "tab\t.txt", "del\x7f", "c1\u0085.txt", "\xff.bin",
	strings.Repeat("f", storage.MaxFilenameLen+1)}

// testFilenames: a filename that would break a response header or a log
// line is refused by Create with storage.ErrInvalidFilename; the longest
// valid one round-trips.
func (s Suite) testFilenames(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	for _, name := range BadFilenames {
		w, err := b.Create(ctx, "fn/bad", storage.CreateOptions{Filename: name})
		if err == nil {
			w.Abort(ctx)
		}
		wantErr(t, "Create with filename "+strings.ToValidUTF8(name[:min(len(name), 20)], "?"), err, storage.ErrInvalidFilename)
	}
	absent(t, b, "fn/bad")
	long := strings.Repeat("é", storage.MaxFilenameLen/2) + "x"
	opts := storage.CreateOptions{Filename: long}
	info := put(t, b, "fn/long", []byte("x"), opts)
	if got := mustStat(t, b, "fn/long"); got.Filename != long || info.Filename != long {
		t.Errorf("a %d-byte filename came back as %q", len(long), got.Filename)
	}
}
