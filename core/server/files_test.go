package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// filesClient is a raw JSON-RPC client of the SEP-2631 files/* methods
// (no SDK implements them): one era, one principal, one capabilities
// object.
type filesClient struct {
	t       *testing.T
	base    string
	key     string
	modern  bool
	caps    string // the capabilities object, JSON
	session string
}

// rpcAnswer is a JSON-RPC answer: a result or an error with data.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func newFilesClient(t *testing.T, base, key string, modern bool, caps string) *filesClient {
	c := &filesClient{t: t, base: base, key: key, modern: modern, caps: caps}
	if !modern {
		resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
			`"capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`, "initialize", "")
		c.session = resp.Header.Get("Mcp-Session-Id")
		if c.session == "" {
			t.Fatalf("initialize: no session (%d)", resp.StatusCode)
		}
		c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", "")
	}
	return c
}

// with is c reporting to t.
func (c *filesClient) with(t *testing.T) *filesClient { cc := *c; cc.t = t; return &cc }

func (c *filesClient) post(body, method, name string, hdr ...string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if c.modern {
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	} else {
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if c.session != "" {
			req.Header.Set("Mcp-Session-Id", c.session)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// call sends one request and returns its answer (an SSE answer's last
// message).
func (c *filesClient) call(method string, params map[string]any) rpcAnswer {
	c.t.Helper()
	params = maps.Clone(params) // the caller's map may serve another client
	if c.modern {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": json.RawMessage(c.caps)}
	}
	name, _ := params["name"].(string)
	if method != "tools/call" {
		name = ""
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	var hdr []string
	if args, _ := params["arguments"].(map[string]any); c.modern && args["key"] != nil {
		hdr = []string{"Mcp-Param-Blob-Key", args["key"].(string)} // upload_file's x-mcp-header
	}
	resp := c.post(string(body), method, name, hdr...)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if d, ok := strings.CutPrefix(lines[i], "data: "); ok && strings.Contains(d, `"id":7`) {
				raw = []byte(d)
				break
			}
		}
	}
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		c.t.Fatalf("%s: %d %q", method, resp.StatusCode, raw)
	}
	return a
}

// ok calls and decodes a result, failing on an error answer.
func (c *filesClient) ok(method string, params map[string]any, v any) {
	c.t.Helper()
	a := c.call(method, params)
	if a.Error != nil {
		c.t.Fatalf("%s: error %d %s %v", method, a.Error.Code, a.Error.Message, a.Error.Data)
	}
	if err := json.Unmarshal(a.Result, v); err != nil {
		c.t.Fatalf("%s: %v in %s", method, err, a.Result)
	}
}

// refused calls and checks the error's code and data.reason.
func (c *filesClient) refused(method string, params map[string]any, code int, reason string) {
	c.t.Helper()
	a := c.call(method, params)
	if a.Error == nil || a.Error.Code != code || a.Error.Data["reason"] != reason {
		c.t.Fatalf("%s: got %s %+v; want error %d reason %s", method, a.Result, a.Error, code, reason)
	}
}

type fileValue struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Digest   *struct{ Algorithm, Value string }
}

type descriptor struct {
	Transport, Method, URL string
	Headers                map[string]string
	ExpiresAt              string
}

type fileAnswer struct {
	UploadID string     `json:"uploadId"`
	Status   string     `json:"status"`
	Received int64      `json:"receivedBytes"`
	Verified bool       `json:"verified"`
	Reason   string     `json:"reason"`
	File     fileValue  `json:"file"`
	Upload   descriptor `json:"upload"`
	Download descriptor `json:"download"`
}

func wireDigest(b []byte) map[string]any {
	s := sha256.Sum256(b)
	return map[string]any{"algorithm": "sha-256", "value": base64.RawURLEncoding.EncodeToString(s[:])}
}

// httpDo sends a request to a descriptor's URL and returns status and body.
func httpDo(t *testing.T, d descriptor, body []byte, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(d.Method, d.URL, bytes.NewReader(body))
	for k, v := range d.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestFilesEndToEnd drives SEP-2631 over HTTP with a raw JSON-RPC client in
// both eras: the upstream PR's authorizeUpload -> PUT -> the URI in a tool
// call -> authorizeDownload -> GET (and a Range); a digest mismatch; another
// principal's URI; a client without the files capability; and the fork's
// prepare (idempotent) -> PUT -> getUpload -> complete -> getDownload.
func TestFilesEndToEnd(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, _ := startTestServer(t, Options{Backend: st, Auth: Auth{Keys: []string{HashKey("secret-a") + " alice", HashKey("secret-b") + " bob",
		HashKey("secret-ro") + " alice scopes=read"}}})
	for _, modern := range []bool{false, true} {
		era := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		t.Run(era, func(t *testing.T) {
			alice := newFilesClient(t, base, "secret-a", modern, `{"files":{}}`)
			bob := newFilesClient(t, base, "secret-b", modern, `{"files":{}}`)
			t.Run("upstream", func(t *testing.T) { filesUpstream(t, alice.with(t), bob.with(t), st, era) })
			t.Run("fork", func(t *testing.T) { filesFork(t, alice.with(t), st, era) })
			t.Run("no capability", func(t *testing.T) {
				none := newFilesClient(t, base, "secret-a", modern, `{}`)
				for _, m := range []string{"files/authorizeUpload", "files/prepareUpload", "files/getDownload"} {
					none.refused(m, map[string]any{"size": 3}, -32601, "capabilityMissing")
				}
				var res struct{ Content []struct{ Type string } }
				none.ok("tools/call", map[string]any{"name": "upload_file", "arguments": map[string]any{"file": "data:text/plain;base64,aGVsbG8="}}, &res)
				if len(res.Content) != 2 || res.Content[1].Type != "resource_link" {
					t.Fatalf("upload_file's output without files: %+v", res.Content)
				}
			})
			t.Run("read scope", func(t *testing.T) {
				ro := newFilesClient(t, base, "secret-ro", modern, `{"files":{}}`)
				a := ro.call("files/authorizeUpload", map[string]any{"mimeType": "text/plain"})
				if a.Error == nil || a.Error.Code != -32000 || !strings.Contains(a.Error.Message, "Forbidden") {
					t.Fatalf("a read-only key's authorizeUpload: %s %+v", a.Result, a.Error)
				}
				ro.refused("files/getUpload", map[string]any{"uploadId": "NONE"}, -32602, "uploadNotFound") // read is enough
			})
			t.Run("schemas", func(t *testing.T) {
				alice := alice.with(t)
				var tools struct{ Tools []map[string]any }
				alice.ok("tools/list", map[string]any{}, &tools)
				for _, tl := range tools.Tools {
					if tl["name"] == "upload_file" {
						b, _ := json.Marshal(tl["inputSchema"])
						if !strings.Contains(string(b), `"transferModes":["inline","upload"]`) {
							t.Fatalf("upload_file's schema lacks transferModes: %s", b)
						}
						return
					}
				}
				t.Fatal("no upload_file")
			})
		})
	}
}

// blobsFilePrefix is where files' bytes live in a principal's view.
const blobsFilePrefix = blobs.FilePrefix

func filesUpstream(t *testing.T, alice, bob *filesClient, st storage.Backend, era string) {
	data := bytes.Repeat([]byte("file objects, "+era+"\n"), 500)
	var up fileAnswer
	alice.ok("files/authorizeUpload", map[string]any{"name": "notes.txt", "mimeType": "text/plain",
		"size": len(data), "digest": wireDigest(data)}, &up)
	if !strings.HasPrefix(up.File.URI, "mcp-file://127.0.0.1:") || up.Upload.Method != "PUT" || !strings.Contains(up.Upload.URL, "/u/") ||
		up.File.Digest == nil || up.File.Size != int64(len(data)) {
		t.Fatalf("authorizeUpload: %+v", up)
	}
	// Not usable before its bytes arrive.
	alice.refused("files/authorizeDownload", map[string]any{"uri": up.File.URI}, -32602, "uploadIncomplete")
	if code, b := httpDo(t, up.Upload, data, nil); code != 201 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	// The URI as an x-mcp-file value: upload_file copies the bytes.
	var res struct {
		IsError           bool
		StructuredContent struct{ Key, SHA256 string }
		Content           []struct {
			Type string
			File fileValue
		}
	}
	alice.ok("tools/call", map[string]any{"name": "upload_file", "arguments": map[string]any{"key": "copy-" + era + ".txt", "file": up.File.URI}}, &res)
	if res.IsError || res.StructuredContent.SHA256 != hexSum(data) {
		t.Fatalf("upload_file with the file URI: %+v", res)
	}
	// Its output names the copy as a file object ({type:"file"}), which
	// downloads like any other.
	if last := res.Content[len(res.Content)-1]; last.Type != "file" || last.File.Digest == nil || last.File.URI == up.File.URI {
		t.Fatalf("upload_file's output for a files client: %+v", res.Content)
	} else {
		var d fileAnswer
		alice.ok("files/authorizeDownload", map[string]any{"uri": last.File.URI}, &d)
		if code, b := httpDo(t, d.Download, nil, nil); code != 200 || !bytes.Equal(b, data) {
			t.Fatalf("GET of the output file: %d, %d bytes", code, len(b))
		}
	}
	var down fileAnswer
	alice.ok("files/authorizeDownload", map[string]any{"uri": up.File.URI}, &down)
	if code, b := httpDo(t, down.Download, nil, nil); code != 200 || !bytes.Equal(b, data) {
		t.Fatalf("GET: %d, %d bytes", code, len(b))
	}
	if code, b := httpDo(t, down.Download, nil, map[string]string{"Range": "bytes=2-5"}); code != 206 || !bytes.Equal(b, data[2:6]) {
		t.Fatalf("GET Range: %d %q", code, b)
	}
	// Someone else's URI: refused as unknown, nothing told.
	bob.refused("files/authorizeDownload", map[string]any{"uri": up.File.URI}, -32602, "fileNotFound")
	bob.ok("tools/call", map[string]any{"name": "upload_file", "arguments": map[string]any{"file": up.File.URI}}, &res)
	if !res.IsError {
		t.Fatalf("bob's upload_file with alice's file URI: %+v", res)
	}
	alice.refused("files/authorizeDownload", map[string]any{"uri": "mcp-file://x"}, -32602, "invalidUri")
	alice.refused("files/authorizeUpload", map[string]any{"digest": map[string]any{"algorithm": "md5", "value": "x"}}, -32602, "unsupportedDigestAlgorithm")
	alice.refused("files/authorizeUpload", map[string]any{"size": 1 << 62}, -32602, "maxSizeExceeded")
	filesDigestMismatch(t, alice, st, data)
}

// filesDigestMismatch: bytes that do not match the pinned digest are
// refused (400 digest_mismatch), nothing is kept, the file says why, and
// the link takes the right bytes afterwards.
func filesDigestMismatch(t *testing.T, alice *filesClient, st storage.Backend, data []byte) {
	other := bytes.ToUpper(data)
	var up fileAnswer
	alice.ok("files/authorizeUpload", map[string]any{"mimeType": "text/plain", "digest": wireDigest(other)}, &up)
	code, b := httpDo(t, up.Upload, data, nil)
	if code != 400 || !strings.Contains(string(b), `"digest_mismatch"`) {
		t.Fatalf("PUT of bytes off the digest: %d %s", code, b)
	}
	id := up.File.URI[strings.LastIndex(up.File.URI, "/")+1:]
	if keys := storedWith(t, st, blobsFilePrefix+id); len(keys) != 0 {
		t.Fatalf("the refused bytes were kept: %q", keys)
	}
	alice.refused("files/authorizeDownload", map[string]any{"uri": up.File.URI}, -32602, "digestMismatch")
	if code, b := httpDo(t, up.Upload, other, nil); code != 201 {
		t.Fatalf("PUT of the pinned bytes after a mismatch: %d %s", code, b)
	}
	if keys := storedWith(t, st, blobsFilePrefix+id); len(keys) != 1 {
		t.Fatalf("the file's bytes are not where the check above looks: %q", keys)
	}
	var down fileAnswer
	alice.ok("files/authorizeDownload", map[string]any{"uri": up.File.URI}, &down)
}

func filesFork(t *testing.T, alice *filesClient, st storage.Backend, era string) {
	data := bytes.Repeat([]byte("the fork's methods, "+era+"\n"), 300)
	prep := map[string]any{"name": "fork.txt", "mimeType": "text/plain", "size": len(data), "digest": wireDigest(data), "idempotencyKey": "k-" + era}
	var p1, p2 fileAnswer
	alice.ok("files/prepareUpload", prep, &p1)
	alice.ok("files/prepareUpload", prep, &p2)
	if p1.UploadID == "" || p1.UploadID != p2.UploadID || p1.File.URI != p2.File.URI || p1.Status != "prepared" {
		t.Fatalf("idempotencyKey replay: %+v then %+v", p1, p2)
	}
	prep["size"] = len(data) + 1
	alice.refused("files/prepareUpload", prep, -32602, "idempotencyConflict")
	alice.refused("files/prepareUpload", map[string]any{"size": 3}, -32602, "invalidParams") // no idempotencyKey
	alice.refused("files/completeUpload", map[string]any{"uploadId": p1.UploadID, "size": len(data)}, -32602, "uploadIncomplete")
	if code, b := httpDo(t, p2.Upload, data, nil); code != 201 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	var g fileAnswer
	alice.ok("files/getUpload", map[string]any{"uploadId": p1.UploadID}, &g)
	if g.Status != "uploaded" || g.Received != int64(len(data)) {
		t.Fatalf("getUpload: %+v", g)
	}
	var done fileAnswer
	alice.ok("files/completeUpload", map[string]any{"uploadId": p1.UploadID, "size": len(data), "digest": wireDigest(data)}, &done)
	if !done.Verified || done.Status != "completed" || done.File.URI != p1.File.URI {
		t.Fatalf("completeUpload: %+v", done)
	}
	var d fileAnswer
	alice.ok("files/getDownload", map[string]any{"uri": p1.File.URI, "range": map[string]any{"start": 3, "endExclusive": 9}}, &d)
	if code, b := httpDo(t, d.Download, nil, nil); code != 206 || !bytes.Equal(b, data[3:9]) || d.Download.Headers["Range"] != "bytes=3-8" {
		t.Fatalf("getDownload range: %d %q %+v", code, b, d.Download)
	}
	alice.refused("files/getDownload", map[string]any{"uri": p1.File.URI, "range": map[string]any{"start": len(data)}}, -32602, "invalidRange")
	// A completed file stays: a later wrong claim is refused and changes nothing.
	alice.refused("files/completeUpload", map[string]any{"uploadId": p1.UploadID, "size": len(data), "digest": wireDigest([]byte("x"))}, -32602, "digestMismatch")
	alice.ok("files/getUpload", map[string]any{"uploadId": p1.UploadID}, &g)
	if g.Status != "completed" || len(storedWith(t, st, p1.UploadID)) != 1 {
		t.Fatalf("a completed file after a wrong completeUpload: %+v", g)
	}
	alice.refused("files/getUpload", map[string]any{"uploadId": "NOSUCHUPLOAD"}, -32602, "uploadNotFound")

	// No digest pinned: completeUpload's digest is checked against the bytes.
	var p3 fileAnswer
	alice.ok("files/prepareUpload", map[string]any{"mimeType": "text/plain", "size": len(data), "idempotencyKey": "k2-" + era}, &p3)
	if code, b := httpDo(t, p3.Upload, data, nil); code != 201 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	alice.refused("files/completeUpload", map[string]any{"uploadId": p3.UploadID, "size": len(data), "digest": wireDigest([]byte("x"))}, -32602, "digestMismatch")
	alice.ok("files/getUpload", map[string]any{"uploadId": p3.UploadID}, &g)
	if g.Status != "failed" || g.Reason != "digestMismatch" {
		t.Fatalf("getUpload after a mismatch: %+v", g)
	}
}

// storedWith lists the stored keys that end in suffix.
func storedWith(t *testing.T, st storage.Backend, suffix string) []string {
	var keys []string
	for _, k := range listAll(t, st) {
		if strings.HasSuffix(k, suffix) {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestFilesElicitation: request_upload's form field takes an mcp-file URI
// (its x-mcp-file lists transferModes "upload") in both eras; in
// 2026-07-28 an answer naming a file whose bytes have not arrived is asked
// again with that file in requestState, and the next round reads it (a
// round naming another file is refused).
func TestFilesElicitation(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, _ := startTestServer(t, Options{Backend: st})
	const caps = `{"elicitation":{"form":{}},"files":{}}`
	data := []byte("a file answered through a form\n")
	authorize := func(t *testing.T, modern bool) fileAnswer {
		var up fileAnswer
		newFilesClient(t, base, "", modern, caps).ok("files/authorizeUpload", map[string]any{"mimeType": "text/plain", "digest": wireDigest(data)}, &up)
		return up
	}
	put := func(t *testing.T, up fileAnswer) {
		if code, b := httpDo(t, up.Upload, data, nil); code != 201 {
			t.Fatalf("PUT: %d %s", code, b)
		}
	}
	t.Run("2025-11-25", func(t *testing.T) {
		c := newMCPClient(t, base, legacyVersion, caps)
		up := authorize(t, false)
		put(t, up)
		events, req, p := startElicitation(t, c, ``)
		if modes, _ := json.Marshal(p.RequestedSchema.Properties["file"]["x-mcp-file"]); !strings.Contains(string(modes), `"upload"`) {
			t.Fatalf("form field's x-mcp-file: %s", modes)
		}
		answer(t, c, req.ID, `{"action":"accept","content":{"file":"`+up.File.URI+`"}}`)
		if res, _ := events.toolResult(); res.IsError || res.StructuredContent.SHA256 != hexSum(data) {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		c := newMCPClient(t, base, modernVersion, caps).with(map[string]string{"Accept": "application/json"})
		first := c.call("tools/call", `{"name":"request_upload","arguments":{}}`)
		inputRequest(t, first.tool())
		up := authorize(t, true)
		accept := `{"upload":{"action":"accept","content":{"file":"` + up.File.URI + `"}}}`
		waiting := c.retry(first, accept) // before the PUT
		if p := inputRequest(t, waiting.tool()); !strings.Contains(p.Message, up.File.URI) {
			t.Fatalf("asked again without naming the file: %+v", p)
		}
		other := authorize(t, true)
		put(t, other)
		if r := c.retry(waiting, `{"upload":{"action":"accept","content":{"file":"`+other.File.URI+`"}}}`).tool(); !r.IsError {
			t.Fatalf("a round naming another file: %+v", r)
		}
		put(t, up)
		r := c.retry(waiting, accept).tool()
		if r.IsError || r.ResultType != "complete" || r.StructuredContent.SHA256 != hexSum(data) {
			t.Fatalf("result %+v", r)
		}
	})
}

// TestFilesClaimsRate: every file record charges the server's claims rate
// per principal, so authorizing uploads in a loop is refused with -32029
// past it, and a tool's output keeps its resource_link then.
func TestFilesClaimsRate(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t), MCP: mcp.Options{Limits: limits.Limits{ClaimsPerMinute: 2}}})
	c := newFilesClient(t, base, "", true, `{"files":{}}`)
	var up fileAnswer
	for range 2 {
		c.ok("files/authorizeUpload", map[string]any{"mimeType": "text/plain"}, &up)
	}
	c.refused("files/authorizeUpload", map[string]any{"mimeType": "text/plain"}, -32029, "rateLimited")
	var res struct{ Content []struct{ Type string } }
	c.ok("tools/call", map[string]any{"name": "upload_file", "arguments": map[string]any{"file": "data:text/plain;base64,aGVsbG8="}}, &res)
	if len(res.Content) != 2 || res.Content[1].Type != "resource_link" {
		t.Fatalf("upload_file's output past the rate: %+v", res.Content)
	}
}

// TestFilesAcrossNodes: two nodes on one store and one public URL serve
// the same files: authorized on A, uploaded through B, an idempotencyKey
// replayed on B names A's upload, downloaded and completed on either. A
// file's state is a record both read, never node memory.
func TestFilesAcrossNodes(t *testing.T) {
	parallel(t)
	st := newLocalStore(t) // one store: a directory takes one process's lock
	const public = "http://files.cluster.test"
	baseA, _ := startTestServer(t, Options{Backend: st, PublicURL: public})
	baseB, _ := startTestServer(t, Options{Backend: st, PublicURL: public})
	onNode := func(d descriptor, base string) descriptor { d.URL = strings.Replace(d.URL, public, base, 1); return d }
	a := newFilesClient(t, baseA, "", true, `{"files":{}}`)
	b := newFilesClient(t, baseB, "", false, `{"files":{}}`)
	data := bytes.Repeat([]byte("across nodes\n"), 100)
	prep := map[string]any{"mimeType": "text/plain", "size": len(data), "digest": wireDigest(data), "idempotencyKey": "nodes"}
	var pa, pb fileAnswer
	a.ok("files/prepareUpload", prep, &pa)
	b.ok("files/prepareUpload", prep, &pb)
	if pa.UploadID != pb.UploadID || !strings.HasPrefix(pa.File.URI, "mcp-file://files.cluster.test/") {
		t.Fatalf("prepare on A then B: %+v, %+v", pa, pb)
	}
	if code, body := httpDo(t, onNode(pb.Upload, baseB), data, nil); code != 201 {
		t.Fatalf("PUT on B: %d %s", code, body)
	}
	var g fileAnswer
	a.ok("files/getUpload", map[string]any{"uploadId": pa.UploadID}, &g)
	if g.Status != "uploaded" || g.Received != int64(len(data)) {
		t.Fatalf("getUpload on A after the PUT on B: %+v", g)
	}
	var d fileAnswer
	b.ok("files/authorizeDownload", map[string]any{"uri": pa.File.URI}, &d)
	if code, body := httpDo(t, onNode(d.Download, baseA), nil, nil); code != 200 || !bytes.Equal(body, data) {
		t.Fatalf("GET on A of B's link: %d, %d bytes", code, len(body))
	}
	a.ok("files/completeUpload", map[string]any{"uploadId": pa.UploadID, "size": len(data)}, &g)
	b.ok("files/getUpload", map[string]any{"uploadId": pa.UploadID}, &g)
	if g.Status != "completed" {
		t.Fatalf("getUpload on B after completeUpload on A: %+v", g)
	}
}

// TestFilesBytesAnotherWay: bytes an upload endpoint stores under a file's
// key without the check of the PUT or tus (reported only as done) are
// checked when they are reported: off the digest, they
// are deleted and the file fails with the reason; the pinned bytes make it
// usable.
func TestFilesBytesAnotherWay(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	base, srv := startTestServer(t, Options{Backend: st})
	c := newFilesClient(t, base, "", true, `{"files":{}}`)
	data := []byte("bytes that came by tus\n")
	var up fileAnswer
	c.ok("files/prepareUpload", map[string]any{"mimeType": "text/plain", "size": len(data), "digest": wireDigest(data), "idempotencyKey": "tus"}, &up)
	store := func(b []byte) {
		info, err := ingest.Store(t.Context(), st, ingest.Spec{Key: blobs.FilePrefix + up.UploadID, MediaType: "text/plain", Size: int64(len(b))}, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		srv.blobs.UploadDone("any", []storage.Info{info})
	}
	store(bytes.ToUpper(data))
	var g fileAnswer
	c.ok("files/getUpload", map[string]any{"uploadId": up.UploadID}, &g)
	if g.Status != "failed" || g.Reason != "digestMismatch" || len(storedWith(t, st, up.UploadID)) != 0 {
		t.Fatalf("after bytes off the digest: %+v, stored %q", g, storedWith(t, st, up.UploadID))
	}
	store(data)
	var done fileAnswer
	c.ok("files/completeUpload", map[string]any{"uploadId": up.UploadID, "size": len(data)}, &done)
	if done.Status != "completed" || !done.Verified {
		t.Fatalf("after the pinned bytes: %+v", done)
	}
}
