package codecbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestRenderTierGroups renders made-up figures with a lower tier: each tier
// gets its row group, AVX-512 VBMI is held to the sizes' targets and AVX2 to
// parity with emmansun.
func TestRenderTierGroups(t *testing.T) {
	r := Results{Tier: "avx512vbmi", Runs: 1, MinTime: time.Millisecond}
	avx2 := TierResults{Tier: "avx2"}
	for range sizes {
		// ours 1.2× emmansun at the default tier, avx2 0.9×, 20× stdlib
		r.MBps = append(r.MBps, [2][]float64{{1200, 1000, 60, 5000}, {1200, 1000, 60, 5000}})
		avx2.MBps = append(avx2.MBps, [2]float64{900, 900})
	}
	r.Lower = []TierResults{avx2}
	out := r.Render()
	for _, want := range []string{
		"| avx512vbmi | 64 KiB | encode | 1200 | 1000 | 60 | 5000 | 1.20× | 20.0× | 0.24× | ≥ 1.5× emmansun, ≥ 10× stdlib | **missed**: emmansun 1.20× < 1.5× |",
		"| avx512vbmi | 64 MiB | decode | 1200 | 1000 | 60 | 5000 | 1.20× | 20.0× | 0.24× | ≥ 1.0× emmansun, ≥ 10× stdlib | met |",
		"| avx2 | 1 MiB | decode | 900 | 1000 | 60 | 5000 | 0.90× | 15.0× | 0.18× | ≥ 1.0× emmansun, ≥ 10× stdlib | **missed**: emmansun 0.90× < 1.0× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing row %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "| avx2 |"); n != 2*len(sizes) {
		t.Errorf("%d avx2 rows, want %d", n, 2*len(sizes))
	}
	if q := (Results{Tier: "avx2", MBps: r.MBps}).Ratios(); q[0].Target != 1.0 {
		t.Errorf("avx2 target %v, want 1.0", q[0].Target)
	}
}
