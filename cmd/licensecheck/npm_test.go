package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClassifyExpression(t *testing.T) {
	tests := []struct {
		expr   string
		ok     bool
		denied bool
	}{
		{"MIT", true, false},
		{"mit", true, false},
		{"(MIT OR Apache-2.0)", true, false},
		{"MIT OR AGPL-3.0-only", true, false},
		{"AGPL-3.0-only OR MIT", true, false},
		{"(GPL-3.0 OR MIT) AND ISC", true, false},
		{"Apache-2.0 WITH LLVM-exception", true, false},
		{"AGPL-3.0", false, true},
		{"SSPL-1.0", false, true},
		{"BUSL-1.1", false, true},
		{"MIT AND AGPL-3.0", false, true},
		{"GPL-3.0 OR AGPL-3.0", false, false},
		{"GPL-3.0", false, false},
		{"UNLICENSED", false, false},
		{"SEE LICENSE IN LICENSE.md", false, false},
		{"MIT OR", false, false},
		{"(MIT", false, false},
		{"OR MIT", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		v := classifyExpression(tt.expr)
		if ok := len(v.problems) == 0; ok != tt.ok || v.denied != tt.denied {
			t.Errorf("%q: ok %v denied %v (%v), want ok %v denied %v", tt.expr, ok, v.denied, v.problems, tt.ok, tt.denied)
		}
	}
}

func TestNPMLockFile(t *testing.T) {
	installed := t.TempDir()
	writeFiles(t, filepath.Join(installed, "node_modules", "fallback"),
		map[string][]byte{"package.json": []byte(`{"name":"fallback","licenses":[{"type":"ISC"}]}`)})
	lock, err := filepath.Abs("testdata/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{root: t.TempDir(), modules: []string{}, npmLock: lock, npmInstalled: installed}
	code, out := runCheck(t, cfg)
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	want := map[string]string{
		"npm:mit": "ok", "npm:either": "ok", "npm:fallback": "ok", "npm:@scope/nested": "ok",
		"npm:agpl": "FAIL", "npm:both": "FAIL", "npm:see-file": "FAIL", "npm:none": "FAIL",
	}
	for name, status := range want {
		if f := tableRow(t, out, name); f[0] != status || f[len(f)-2] != "test-only" {
			t.Errorf("%s row %q, want %s ... test-only", name, f, status)
		}
	}
	if !strings.Contains(out, "FAIL  npm:none@1.0.0 (test-only): no license field") {
		t.Error("no FAIL line for the package without a license field")
	}
	if strings.Count(out, " (test-only): ") != 4 {
		t.Error("want exactly four FAIL lines")
	}
}

func TestLicenceFileNames(t *testing.T) {
	dir := t.TempDir()
	names := []string{"LICENSE", "LICENCE.md", "COPYING", "UNLICENSE", "LICENSE-APACHE", "MIT-LICENSE.txt",
		"license.go", "LICENSE.minisig", "README.md", "licenses_test.go"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := licenceFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sortedNames(files), " "); got != "COPYING LICENCE.md LICENSE LICENSE-APACHE MIT-LICENSE.txt UNLICENSE" {
		t.Errorf("licence files %q", got)
	}
}

func TestEscape(t *testing.T) {
	if got := escape("github.com/BurntSushi/toml"); got != "github.com/!burnt!sushi/toml" {
		t.Errorf("escape: %q", got)
	}
	if got := unescape("github.com/!burnt!sushi/toml@v1.0.0-!r!c1"); got != "github.com/BurntSushi/toml@v1.0.0-RC1" {
		t.Errorf("unescape: %q", got)
	}
}
