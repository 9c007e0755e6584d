package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestAllowRules(t *testing.T) {
	g := testGraph(map[string][]string{
		"m/core/mcp":          {"m/core/codec", "m/core/mcp/sse", "fmt"},
		"m/core/mcp/sse":      {"m/core/blobs", "io"},
		"m/core/codec":        {"x.org/simd/v2/amd64"},
		"m/core/blobs":        {"m/core/mcp", "x.org/cpu"},
		"m/storage":           {"io"},
		"x.org/simd/v2/amd64": nil,
		"x.org/cpu":           nil,
		"fmt":                 {"io"},
		"io":                  nil,
	})
	rules := []allowRule{
		{"core/mcp", []string{"core/codec", "core/mcp/..."}}, // a pattern, std implied
		{"core/mcp/sse", nil},                                // std only: core/blobs is refused
		{"core/codec", []string{"x.org/simd/v2"}},            // third party: the root and below
		{"core/blobs", []string{"core/mcp", "x.org/cpu/v2"}}, // x.org/cpu is not under x.org/cpu/v2
		{"core/token", nil},                                  // no such package
		// storage has no row
	}
	res := checkAllowed(g, rules)
	got := fmt.Sprintf("checked %d, %v", res.checked, res.violations)
	want := "checked 5, [" +
		"core/blobs/: core/blobs imports x.org/cpu, not in its row of docs/architecture.md " +
		"core/mcp/sse/: core/mcp/sse imports core/blobs, not in its row of docs/architecture.md " +
		"storage/: storage has no row in docs/architecture.md (cmd/depcheck allowRules) " +
		"cmd/depcheck/allow.go: row core/token names no package]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCheckDoc(t *testing.T) {
	doc := strings.Join([]string{
		"# x",
		"| folder | role |", // another table: not read
		"| `core/sse/` | std |",
		"",
		docTable,
		"| --- | --- | --- |",
		"| `core/mcp/` | the protocol | std, `core/mcp/...`, `core/codec/` |", // order and slashes do not matter
		"| `core/codec/` | base64 | std, `asm` |",                             // depcheck allows x.org/simd too
		"| `core/extra/` | not in the table | std |",
		"",
		docRules,
		"- rule one",
		"- rule three",
		"## Next",
		"- not a rule",
	}, "\n")
	allows := []allowRule{
		{"core/mcp", []string{"core/codec", "core/mcp/..."}},
		{"core/codec", []string{"asm", "x.org/simd"}},
		{"core/token", nil},
	}
	res := checkDoc([]byte(doc), allows, []depRule{{rule: "rule one"}}, []importRule{{rule: "rule two"}})
	got := fmt.Sprintf("checked %d, %v", res.checked, res.violations)
	want := "checked 7, [" +
		`docs/architecture.md: core/codec may import "asm" in the doc, "asm, x.org/simd" in cmd/depcheck ` +
		"docs/architecture.md: row core/extra is not in cmd/depcheck allowRules " +
		"docs/architecture.md: no row for core/token (may import: std) " +
		`docs/architecture.md: "rule three" is listed under "## Rules on the whole graph" but not checked ` +
		`docs/architecture.md: "rule two" is checked but not listed under "## Rules on the whole graph"]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestArchitectureDoc holds the repository's docs/architecture.md against
// the tables, as `go run ./cmd/depcheck` does.
func TestArchitectureDoc(t *testing.T) {
	doc, err := os.ReadFile("../../" + archDoc)
	if err != nil {
		t.Fatal(err)
	}
	if res := checkDoc(doc, allowRules, depRules, importRules); len(res.violations) > 0 || res.checked == 0 {
		t.Errorf("checked %d:\n%s", res.checked, strings.Join(res.violations, "\n"))
	}
}
