package main

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fixture modules are testdata/modules/<name>, served as
// example.com/<name> v1.0.0 from a file:// module proxy the tests write, so
// the check runs end to end (go list, the module cache, the licence files)
// without the network. agpl's LICENSE is licensecheck's own AGPL-3.0 test
// text, taken from the module cache at test time rather than committed here.
const fixtureVersion = "v1.0.0"

// agplText is the AGPL-3.0 text licensecheck tests itself with.
func agplText(t *testing.T) []byte {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/licensecheck").Output()
	if err != nil {
		t.Fatalf("locating licensecheck: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "testdata", "AGPL-3.0.t1"))
	if err != nil {
		t.Fatal(err)
	}
	// A .t1 file is a header (coverage, then the expected matches), a blank
	// line and the text.
	_, text, ok := bytes.Cut(b, []byte("\n\n"))
	if !ok {
		t.Fatal("AGPL-3.0.t1: no text after its header")
	}
	return text
}

// isolateGo points the go command at an empty module cache and at a file
// proxy holding the fixture modules, and returns the proxy's folder.
func isolateGo(t *testing.T) string {
	t.Helper()
	agpl := agplText(t) // before GOMODCACHE moves
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	entries, err := os.ReadDir("testdata/modules")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		extra := map[string][]byte{}
		if e.Name() == "agpl" {
			extra["LICENSE"] = agpl
			extra["cmd/agpltool/main.go"] = []byte("package main\n\nimport _ \"example.com/agpl\"\n\nfunc main() {}\n")
		}
		writeProxyModule(t, proxy, e.Name(), extra)
	}
	t.Setenv("GOMODCACHE", filepath.Join(tmp, "modcache"))
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	return proxy
}

// writeProxyModule writes example.com/<name>@v1.0.0 into the proxy folder:
// testdata/modules/<name>, a go.mod and the extra files (path: content).
func writeProxyModule(t *testing.T, proxy, name string, extra map[string][]byte) {
	t.Helper()
	path := "example.com/" + name
	gomod := []byte("module " + path + "\n\ngo 1.26\n")
	files := map[string][]byte{"go.mod": gomod}
	for n, b := range extra {
		files[n] = b
	}
	src := filepath.Join("testdata", "modules", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if files[e.Name()], err = os.ReadFile(filepath.Join(src, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for n, b := range files {
		w, err := zw.Create(path + "@" + fixtureVersion + "/" + n)
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(proxy, path, "@v")
	writeFiles(t, dir, map[string][]byte{
		"list":                   []byte(fixtureVersion + "\n"),
		fixtureVersion + ".info": []byte(`{"Version":"` + fixtureVersion + `","Time":"2026-01-01T00:00:00Z"}`),
		fixtureVersion + ".mod":  gomod,
		fixtureVersion + ".zip":  zb.Bytes(),
	})
}

// writeApp writes a main module example.com/app into a new folder whose
// main package imports the named fixture modules, and returns the folder.
func writeApp(t *testing.T, deps ...string) string {
	t.Helper()
	var req, imp strings.Builder
	for _, d := range deps {
		req.WriteString("require example.com/" + d + " " + fixtureVersion + "\n")
		imp.WriteString("import _ \"example.com/" + d + "\"\n")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{
		"go.mod":  []byte("module example.com/app\n\ngo 1.26\n\n" + req.String()),
		"main.go": []byte("package main\n\n" + imp.String() + "\nfunc main() {}\n"),
	})
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// appConfig checks the app in dir alone: its graph shipped, no tools, no npm.
func appConfig(dir string) config {
	return config{root: dir, modules: []string{"."}, ship: "."}
}

// runCheck runs the check and returns its exit code and output.
func runCheck(t *testing.T, cfg config) (int, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := run(&out, &errw, cfg)
	t.Logf("exit %d\n%s%s", code, out.String(), errw.String())
	return code, out.String() + errw.String()
}

// tableRow is the table line of a module, its fields split on blanks.
func tableRow(t *testing.T, out, module string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[1] == module {
			return f
		}
	}
	t.Fatalf("no table row for %s", module)
	return nil
}
