package codecbench

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRewriteSection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "RESULTS.md")
	steps := []struct{ before, table, after string }{
		{"", "T1\n", "<!-- codec:begin -->\nT1\n<!-- codec:end -->\n"},
		{"# R\n\nother", "T1\n", "# R\n\nother\n\n<!-- codec:begin -->\nT1\n<!-- codec:end -->\n"},
		{"a\n<!-- codec:begin -->\nold\n<!-- codec:end -->\nb\n", "T2\n", "a\n<!-- codec:begin -->\nT2\n<!-- codec:end -->\nb\n"},
	}
	for _, s := range steps {
		if err := os.WriteFile(file, []byte(s.before), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := RewriteSection(file, s.table); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(file)
		if string(got) != s.after {
			t.Errorf("rewrite of %q = %q, want %q", s.before, got, s.after)
		}
	}
	os.WriteFile(file, []byte("<!-- codec:begin -->\nno end"), 0o644)
	if RewriteSection(file, "x") == nil {
		t.Error("no error for a lone begin marker")
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
}
