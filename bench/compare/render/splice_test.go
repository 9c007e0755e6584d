package render

import (
	"strings"
	"testing"
)

func resultsDoc(p2, p6 string, whyP6 bool) string {
	why := "- P2: p2 why " + p2 + "\n"
	if whyP6 {
		why += "- P6: p6 why " + p6 + "\n- P6: second p6 why\n"
	}
	return "# results\n\n- date: D\n\n## Targets\n\n| # | workload | target | measured | verdict |\n|---|---|---|---|---|\n" +
		"| P2 | read | x | " + p2 + " | met |\n| P6 | small | y | " + p6 + " | **missed** |\n" +
		"\nRatios are mcpblob ÷ reference measured side by side.\n\n" + why + "- P9: p9 why\n\n![P2](charts/target-p2.svg)\n" +
		"\n## P2: read\n\nTarget: x. Verdict: met.\n\ntable " + p2 + "\n" +
		"\n## P6: small\n\nTarget: y. Verdict: missed.\n\ntable " + p6 + "\n" +
		"\n## P1: base64 codec\n\n<!-- codec:begin -->\ncodec\n<!-- codec:end -->\n"
}

// TestSpliceTargetsKeepsTheOthers: a P6 run alone replaces P6's row, why
// lines and section, and leaves P2's and the codec's as they were.
func TestSpliceTargetsKeepsTheOthers(t *testing.T) {
	old := resultsDoc("OLD2", "OLD6", true)
	fresh := resultsDoc("NOT-RUN", "NEW6", true)
	got, ok := SpliceTargets(old, fresh, []string{"P6"}, "Measured alone.")
	if !ok {
		t.Fatal("not spliced")
	}
	for _, want := range []string{"| P2 | read | x | OLD2 |", "- P2: p2 why OLD2\n- P6: p6 why NEW6\n- P6: second p6 why\n- P9: p9 why\n\n",
		"table OLD2", "## P6: small\n\nMeasured alone.\n\nTarget: y. Verdict: missed.\n\ntable NEW6\n\n## P1", "<!-- codec:begin -->\ncodec"} {
		if !strings.Contains(got, want) {
			t.Errorf("spliced file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "OLD6") || strings.Contains(got, "NOT-RUN") {
		t.Errorf("old P6 or fresh P2 figures left:\n%s", got)
	}
	// P6 met now: its why lines go, the others stay.
	got, _ = SpliceTargets(old, resultsDoc("NOT-RUN", "NEW6", false), []string{"P6"}, "n")
	if !strings.Contains(got, "- P2: p2 why OLD2\n- P9: p9 why\n\n") || strings.Contains(got, "p6 why") {
		t.Errorf("why list:\n%s", got)
	}
	if _, ok := SpliceTargets("# empty\n", fresh, []string{"P6"}, "n"); ok {
		t.Error("spliced into a file without P6's parts")
	}
}
