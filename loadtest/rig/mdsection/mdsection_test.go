package mdsection

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRewrite: a missing section is appended, a present one replaced with
// the rest of the file kept, and Extract reads back what was written.
func TestRewrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.md")
	if err := os.WriteFile(file, []byte("# title\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"one\n", "two\n"} {
		if err := Rewrite(file, "x", body); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(file)
		if got, ok := Extract(string(b), "x"); !ok || got != body {
			t.Fatalf("Extract after Rewrite(%q) = %q, %v\n%s", body, got, ok, b)
		}
	}
	b, _ := os.ReadFile(file)
	if want := "# title\n\n<!-- x:begin -->\ntwo\n<!-- x:end -->\n"; string(b) != want {
		t.Fatalf("file:\n%q\nwant\n%q", b, want)
	}
	if err := os.WriteFile(file, []byte("<!-- x:begin -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(file, "x", "y\n"); err == nil {
		t.Fatal("Rewrite of a file with only a begin marker succeeded")
	}
}
