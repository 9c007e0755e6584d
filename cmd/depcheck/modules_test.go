package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFindModules: every go.mod is found, the root first, and the tools,
// git and npm folders are skipped.
func TestFindModules(t *testing.T) {
	repo := t.TempDir()
	for _, dir := range []string{".", "loadtest", "a/testdata/x", ".tools/m", ".git/m", "n/node_modules/m"} {
		if err := os.MkdirAll(filepath.Join(repo, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, dir, "go.mod"), []byte("module m\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs, err := findModules(repo)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{repo, filepath.Join(repo, "a/testdata/x"), filepath.Join(repo, "loadtest")}
	if !slices.Equal(dirs, want) {
		t.Errorf("findModules = %q, want %q", dirs, want)
	}
}

// TestModuleRule: a rig package importing a suite fails, a suite importing
// the rig does not, and a rule for a missing module is skipped.
func TestModuleRule(t *testing.T) {
	mainMod := &graph{repo: "/r", root: "/r", module: "m"}
	lt := &graph{repo: "/r", root: "/r/loadtest", module: "m/loadtest"}
	lt.main = []*pkg{
		{ImportPath: "m/loadtest/rig/proc", Dir: "/r/loadtest/rig/proc", Imports: []string{"m/loadtest/hardening", "os"}},
		{ImportPath: "m/loadtest/hardening", Dir: "/r/loadtest/hardening", Imports: []string{"m/loadtest/rig/proc", "m/core/token"}},
	}
	res := moduleRules[0].check([]*graph{mainMod, lt})
	if res.checked != 1 || len(res.violations) != 1 || !strings.Contains(res.violations[0], "loadtest/rig/proc/: loadtest/rig/proc imports loadtest/hardening") {
		t.Errorf("checked %d, violations %q; want 1 checked, rig/proc importing hardening", res.checked, res.violations)
	}
	lt.main[1].Imports = append(lt.main[1].Imports, "m/core/server")
	if res := moduleRules[1].check([]*graph{mainMod, lt}); len(res.violations) != 1 {
		t.Errorf("loadtest importing core/server: violations %q, want 1", res.violations)
	}
	if res := moduleRules[2].check([]*graph{mainMod, lt}); res.skip == "" {
		t.Errorf("a rule for a missing module is not skipped: %+v", res)
	}
}
