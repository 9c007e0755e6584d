package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestAGPLModuleFails(t *testing.T) {
	isolateGo(t)
	code, out := runCheck(t, appConfig(writeApp(t, "agpl", "mit")))
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (an AGPL module in the graph)", code)
	}
	if f := tableRow(t, out, "example.com/agpl"); f[0] != "FAIL" || f[3] != "AGPL-3.0" || f[4] != "shipped" {
		t.Errorf("agpl row %q, want FAIL ... AGPL-3.0 shipped", f)
	}
	if f := tableRow(t, out, "example.com/mit"); f[0] != "ok" || f[3] != "MIT" {
		t.Errorf("mit row %q, want ok ... MIT", f)
	}
	if !strings.Contains(out, "FAIL  example.com/agpl@v1.0.0 (shipped): LICENSE: AGPL-3.0 is denied") {
		t.Error("no FAIL line naming the AGPL licence file")
	}
}

func TestMITModulePasses(t *testing.T) {
	isolateGo(t)
	code, out := runCheck(t, appConfig(writeApp(t, "mit")))
	if code != 0 {
		t.Fatalf("exit code %d, want 0 (only an MIT module)", code)
	}
	if f := tableRow(t, out, "example.com/mit"); f[0] != "ok" || f[2] != "v1.0.0" || f[3] != "MIT" || f[4] != "shipped" {
		t.Errorf("mit row %q, want ok example.com/mit v1.0.0 MIT shipped", f)
	}
	if !strings.Contains(out, "licensecheck: 1 checked (1 shipped, 0 test-only, 0 tool): ok") {
		t.Error("summary line missing or wrong")
	}
}

func TestNoLicenceAndUnknownTextFail(t *testing.T) {
	isolateGo(t)
	code, out := runCheck(t, appConfig(writeApp(t, "nolicence", "unknown")))
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	for _, want := range []string{
		"FAIL  example.com/nolicence@v1.0.0 (shipped): no licence file",
		"FAIL  example.com/unknown@v1.0.0 (shipped): LICENSE: unknown text (0% recognised)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestAllowListExcusesAllButDenied(t *testing.T) {
	isolateGo(t)
	cfg := appConfig(writeApp(t, "agpl", "nolicence"))
	cfg.allowFile = filepath.Join(t.TempDir(), "allow.txt")
	allow := "# reasons\nexample.com/nolicence its licence is in the parent repository\n" +
		"example.com/agpl someone wants it anyway\nexample.com/gone no longer used\n"
	if err := os.WriteFile(cfg.allowFile, []byte(allow), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runCheck(t, cfg)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (AGPL cannot be allowed)", code)
	}
	if f := tableRow(t, out, "example.com/nolicence"); f[0] != "allow" {
		t.Errorf("nolicence row %q, want allow", f)
	}
	if f := tableRow(t, out, "example.com/agpl"); f[0] != "FAIL" {
		t.Errorf("agpl row %q, want FAIL despite the allow-list", f)
	}
	if !strings.Contains(out, "note: allow-list entry example.com/gone matches nothing checked") {
		t.Error("no note on the stale allow-list entry")
	}
}

func TestAllowListEntryNeedsAReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow.txt")
	if err := os.WriteFile(path, []byte("example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readAllowList(path); err == nil || !strings.Contains(err.Error(), "has no reason") {
		t.Fatalf("readAllowList: %v, want an error saying the entry has no reason", err)
	}
}

// A tool is checked as built: the module list embedded in its binary. The
// module cache is emptied after the build, so the check has to download the
// tool's modules itself.
func TestToolBinaryIsChecked(t *testing.T) {
	isolateGo(t)
	app := writeApp(t, "agpl")
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "agpltool"), ".")
	build.Dir = app
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	makefile := filepath.Join(t.TempDir(), "Makefile")
	if err := os.WriteFile(makefile, []byte("$(TOOLBIN)/agpltool:\n\tgo install\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMODCACHE", filepath.Join(t.TempDir(), "modcache"))
	cfg := appConfig(writeApp(t, "mit"))
	cfg.toolsDir, cfg.makefile = bin, makefile
	code, out := runCheck(t, cfg)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (the tool links an AGPL module)", code)
	}
	if f := tableRow(t, out, "example.com/agpl"); f[0] != "FAIL" || f[3] != "AGPL-3.0" || f[4] != "tool" || f[5] != "tool:agpltool" {
		t.Errorf("agpl row %q, want FAIL ... AGPL-3.0 tool tool:agpltool", f)
	}
}

// A tool built inside a module's folder in the module cache can have no
// version in its build info ("(devel)"): the module's cached versions are
// checked instead.
func TestToolBuiltInModuleCacheIsChecked(t *testing.T) {
	isolateGo(t)
	out, err := exec.Command("go", "mod", "download", "-json", "example.com/agpl@"+fixtureVersion).Output()
	if err != nil {
		t.Fatalf("go mod download: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "agpltool"), "./cmd/agpltool")
	build.Dir = mod.Dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if v := goVersionM(t, filepath.Join(bin, "agpltool")); !strings.Contains(v, "example.com/agpl\t(devel)") {
		t.Fatalf("the fixture tool's main module is not (devel):\n%s", v)
	}
	cfg := appConfig(writeApp(t, "mit"))
	cfg.toolsDir = bin
	code, report := runCheck(t, cfg)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (the tool is an AGPL module)", code)
	}
	if f := tableRow(t, report, "example.com/agpl"); f[0] != "FAIL" || f[2] != fixtureVersion || f[3] != "AGPL-3.0" || f[5] != "tool:agpltool(devel)" {
		t.Errorf("agpl row %q, want FAIL example.com/agpl v1.0.0 AGPL-3.0 tool tool:agpltool(devel)", f)
	}
}

func goVersionM(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestMissingToolIsAnError(t *testing.T) {
	isolateGo(t)
	makefile := filepath.Join(t.TempDir(), "Makefile")
	if err := os.WriteFile(makefile, []byte("$(TOOLBIN)/weed:\n\tgo install\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := appConfig(writeApp(t, "mit"))
	cfg.toolsDir, cfg.makefile = t.TempDir(), makefile
	code, out := runCheck(t, cfg)
	if code != 2 || !strings.Contains(out, "weed is not installed") {
		t.Fatalf("exit code %d, want 2 and a message that weed is not installed", code)
	}
}

// A module only a test imports is test-only; one the shipped package links
// is shipped.
func TestShippedAndTestOnly(t *testing.T) {
	isolateGo(t)
	app := writeApp(t, "mit", "unknown")
	writeFiles(t, app, map[string][]byte{
		"main.go":      []byte("package main\n\nimport _ \"example.com/mit\"\n\nfunc main() {}\n"),
		"main_test.go": []byte("package main\n\nimport _ \"example.com/unknown\"\n"),
	})
	_, out := runCheck(t, appConfig(app))
	if f := tableRow(t, out, "example.com/mit"); f[4] != "shipped" || f[5] != "." {
		t.Errorf("mit row %q, want shipped .", f)
	}
	if f := tableRow(t, out, "example.com/unknown"); f[4] != "test-only" || f[5] != "." {
		t.Errorf("unknown row %q, want test-only .", f)
	}
}
