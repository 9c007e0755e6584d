package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testGraph builds a graph from import edges: paths starting with "m/" are
// in the main module m, paths with a dot are third party, the rest standard.
func testGraph(edges map[string][]string) *graph {
	main := &struct {
		Path string
		Main bool
	}{"m", true}
	g := &graph{root: "/r", module: "m", pkgs: map[string]*pkg{}}
	for path, imps := range edges {
		p := &pkg{ImportPath: path, Imports: imps, Standard: path[0] != 'm' && !strings.Contains(path, ".")}
		p.Dir = "/r/" + path[min(2, len(path)):] // import positions fall back to the folder
		if path[0] == 'm' {
			p.Module = main
			g.main = append(g.main, p)
		}
		g.pkgs[path] = p
	}
	// Sorted, as load sorts them.
	slices.SortFunc(g.main, func(a, b *pkg) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	for _, p := range g.pkgs { // Deps: the transitive closure of Imports
		seen := map[string]bool{}
		var walk func(string)
		walk = func(path string) {
			for _, imp := range g.pkgs[path].Imports {
				if !seen[imp] {
					seen[imp] = true
					p.Deps = append(p.Deps, imp)
					walk(imp)
				}
			}
		}
		walk(p.ImportPath)
	}
	return g
}

func TestRules(t *testing.T) {
	g := testGraph(map[string][]string{
		"m/core/mcp":      {"m/core/codec", "fmt"},
		"m/core/mcp/sse":  {"m/core/mcp", "m/core/blobs"},
		"m/core/blobs":    {"m/storage"},
		"m/core/codec":    {"x.org/simd"},
		"m/storage":       {"io"},
		"m/cmd/mcpblob":   {"m/core/blobs", "m/storage"},
		"x.org/simd":      {"x.org/cpu"},
		"x.org/cpu":       nil,
		"fmt":             {"io"},
		"io":              nil,
		"m/core/mcp/scan": {"fmt"},
		"m/core/mcp/http": {"m/core/mcp", "m/core/mcp/scan", "fmt", "x.org/json", "x.org/cpu"},
		"x.org/json":      nil,
	})
	for _, tc := range []struct {
		res  result
		want string
	}{
		{depRule{"", "core/mcp/...", inModule("storage/...")}.check(g),
			"checked 4, skip \"\", [core/mcp/sse/: core/mcp/sse -> core/blobs -> storage]"},
		{depRule{"", "core/mcp/http", beyondDepsOf("core/mcp")}.check(g),
			"checked 1, skip \"\", [core/mcp/http/: core/mcp/http -> core/mcp/scan core/mcp/http/: core/mcp/http -> x.org/json]"},
		{depRule{"", "core/codec", thirdPartyExcept("x.org/simd")}.check(g), "checked 1, skip \"\", []"},
		{depRule{"", "core/codec", thirdPartyExcept()}.check(g),
			"checked 1, skip \"\", [core/codec/: core/codec -> x.org/simd core/codec/: core/codec -> x.org/simd -> x.org/cpu]"},
		{depRule{"", "core/conformance", thirdPartyExcept()}.check(g), "checked 0, skip \"no package core/conformance yet\", []"},
		{importRule{"", inModule("core/blobs"), []string{"cmd/..."}}.check(g),
			"checked 7, skip \"\", [core/mcp/sse/: core/mcp/sse imports core/blobs]"},
		{importRule{"", inModule("core/conformance/..."), []string{"cmd/..."}}.check(g),
			"checked 0, skip \"no such package in the graph\", []"},
	} {
		got := fmt.Sprintf("checked %d, skip %q, %v", tc.res.checked, tc.res.skip, tc.res.violations)
		if got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestMatchAny(t *testing.T) {
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{"core/mcp/...", "core/mcp", true},
		{"core/mcp/...", "core/mcp/sse", true},
		{"core/mcp/...", "core/mcpx", false},
		{"core/server", "core/server", true},
		{"core/server", "core/server/internal", false},
		{"storage", "storage/s3", false},
	} {
		if got := matchAny([]string{tc.pattern}, tc.rel); got != tc.want {
			t.Errorf("matchAny(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
}
