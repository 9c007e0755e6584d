package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteStormResults: a run of another build adds its row, a run of
// the same build replaces it, and the rest of the file stays.
func TestWriteStormResults(t *testing.T) {
	file := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := os.WriteFile(file, []byte("# results\n\nkept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(label, row string) {
		t.Helper()
		if err := writeStormResults(config{results: file, resultsLabel: label, repo: t.TempDir()}, "| "+label+" | "+row+" |"); err != nil {
			t.Fatal(err)
		}
	}
	write("before", "1")
	write("after", "2")
	write("before", "3")
	b, _ := os.ReadFile(file)
	s := string(b)
	for _, want := range []string{"# results\n\nkept\n", "| after | 2 |", "| before | 3 |", stormHeader} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	if strings.Contains(s, "| before | 1 |") || strings.Count(s, "| build |") != 1 {
		t.Errorf("the old row of a build stays, or the header repeats:\n%s", s)
	}
}
