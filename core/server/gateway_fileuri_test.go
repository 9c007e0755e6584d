package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// TestGatewayFileURIExpanded: a file uploaded through SEP-2631 to the
// gateway (files/authorizeUpload, 2026-07-28, served by the gateway
// itself, and a PUT) is passed to the gateway as its mcp-file URI, and the inline-only upstream gets a data URI whose
// decoded bytes are the upload's, encoded from the store as the request
// streams (the gateway's heap stays flat); another principal's URI, an
// unknown one and one not uploaded are refused -32602 with data.reason,
// the upstream getting no request; the gateway's tools/list advertises
// transferModes.
func TestGatewayFileURIExpanded(t *testing.T) {
	heapTest(t)
	size := 64 << 20
	if testing.Short() || raceEnabled {
		size = 8 << 20
	}
	var requests atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		br := bufio.NewReaderSize(r.Body, 4<<10)
		head, _ := br.Peek(120)
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(head, []byte(`"tools/list"`)) {
			var m struct{ ID json.RawMessage }
			b, _ := io.ReadAll(br)
			json.Unmarshal(b, &m)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"digest","inputSchema":{"type":"object","properties":{"file":{"type":"string","x-mcp-file":{"accept":["application/octet-stream"]}}}}}]}}`)
			return
		}
		requests.Add(1)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+digestFileArg(br)+`"}]}}`)
	}))
	t.Cleanup(up.Close)
	st := newLocalStore(t)
	const public = "http://files.cluster.test"
	keys := Auth{Keys: []string{HashKey("alice-key") + " alice", HashKey("bob-key") + " bob"}}
	gw, _ := startTestServer(t, Options{Backend: st, PublicURL: public, Auth: keys, Gateway: gateway.Options{Upstream: up.URL + "/mcp"}})

	alice := newFilesClient(t, gw, "alice-key", true, `{"files":{}}`)
	data := storagetest.Bytes(3, 0, int64(size))
	var done, pending fileAnswer
	alice.ok("files/authorizeUpload", map[string]any{"mimeType": "application/octet-stream", "size": size, "digest": wireDigest(data)}, &done)
	alice.ok("files/authorizeUpload", map[string]any{"mimeType": "application/octet-stream", "size": 3}, &pending)
	done.Upload.URL = strings.Replace(done.Upload.URL, public, gw, 1)
	if code, b := httpDo(t, done.Upload, data, nil); code != 201 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	sum := sha256.Sum256(data)
	data = nil

	call := func(key, uri string) (*http.Response, []byte) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"digest","arguments":{"file":"` + uri + `"}}}`
		return gwPost(t, gw, key, strings.NewReader(body), int64(len(body)))
	}
	heap := storagetest.StartHeapMonitor()
	resp, b := call("alice-key", done.File.URI)
	grew := heap.Stop()
	want := fmt.Sprintf("application/octet-stream %d %x", size, sum)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(want)) {
		t.Fatalf("tools/call with the file URI: %d %.300s; want the upstream's %q", resp.StatusCode, b, want)
	}
	t.Logf("%d MiB file expanded through the gateway; heap grew %.2f MiB", size>>20, float64(grew)/(1<<20))
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes expanding a %d MiB file; bound 16 MiB", grew, size>>20)
	}

	for _, c := range []struct{ key, uri, reason string }{
		{"bob-key", done.File.URI, "fileNotFound"},
		{"alice-key", "mcp-file://files.cluster.test/NOPE", "fileNotFound"},
		{"alice-key", pending.File.URI, "uploadIncomplete"},
		{"alice-key", "mcp-file://elsewhere.test/" + strings.TrimPrefix(done.File.URI, "mcp-file://files.cluster.test/"), "invalidUri"},
	} {
		resp, b := call(c.key, c.uri)
		var m rpcAnswer
		json.Unmarshal(b, &m)
		if resp.StatusCode != http.StatusOK || m.Error == nil || m.Error.Code != -32602 || m.Error.Data["argument"] != "file" ||
			m.Error.Data["reason"] != c.reason {
			t.Errorf("%s %s: %d %s; want -32602 naming file, reason %s", c.key, c.uri, resp.StatusCode, b, c.reason)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the upstream got %d tools/call requests; want only the good one", n)
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	if _, b := gwPost(t, gw, "alice-key", strings.NewReader(body), int64(len(body))); !bytes.Contains(b, []byte(`"transferModes":["inline","upload"]`)) {
		t.Errorf("the gateway's tools/list: %s; want transferModes inline and upload", b)
	}
}

// digestFileArg reads a tools/call body to its "file" argument and
// decodes its data URI as it streams: "<type> <size> <sha256>".
func digestFileArg(br *bufio.Reader) string {
	for {
		if _, err := br.ReadString('"'); err != nil {
			return "no file argument"
		}
		if b, _ := br.Peek(7); string(b) == `file":"` {
			br.Discard(7)
			break
		}
	}
	dr, err := codec.NewDataURIReader(&stringContents{br})
	if err != nil {
		return "not a data URI"
	}
	h := sha256.New()
	n, err := dr.WriteTo(h)
	if err != nil {
		return "broken data URI"
	}
	return fmt.Sprintf("%s %d %x", dr.Header.MediaType, n, h.Sum(nil))
}

// stringContents reads a JSON string without escapes up to its closing
// quote.
type stringContents struct{ br *bufio.Reader }

func (s *stringContents) Read(p []byte) (int, error) {
	if b, err := s.br.Peek(1); err != nil || b[0] == '"' {
		return 0, io.EOF
	}
	chunk, _ := s.br.Peek(min(len(p), max(s.br.Buffered(), 1)))
	n := len(chunk)
	if i := bytes.IndexByte(chunk, '"'); i >= 0 {
		n = i
	}
	return s.br.Read(p[:n])
}
